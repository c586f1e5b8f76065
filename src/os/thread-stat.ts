// Reading a thread's scheduling class (Linux): the policy (0 SCHED_OTHER, 3 SCHED_BATCH, 5 SCHED_IDLE, ...) and
// nice value from /proc/<pid>/task/<tid>/stat, parsed by a pure function, and a reader listing every thread of a
// process with its name. Used to check that Bun's shared "HTTP Client" thread runs at normal priority
// (http-client-thread.ts; the tests and scripts/bench/outbound.ts). Elsewhere the reader answers [].

import { readFileSync, readdirSync } from "node:fs";

export const SCHED_OTHER = 0;
export const SCHED_BATCH = 3;
export const SCHED_IDLE = 5;

export interface ThreadStat {
  /** The thread's name as stat shows it (comm, at most 15 bytes). */
  name: string;
  /** The scheduling policy (field 41 of stat). */
  policy: number;
  /** The nice value, -20..19 (field 19). */
  nice: number;
}

export interface ThreadInfo extends ThreadStat {
  tid: number;
}

/**
 * Parse the text of /proc/<pid>/stat or /proc/<pid>/task/<tid>/stat; null when it is not one. The name sits
 * in parentheses and may itself hold spaces and parentheses, so the fields are counted from the last ")".
 */
export function parseThreadStat(text: string): ThreadStat | null {
  const open = text.indexOf("(");
  const close = text.lastIndexOf(")");
  if (open < 0 || close < open) return null;
  // After ") ": field 3 (state) is index 0, so field n is index n - 3.
  const fields = text
    .slice(close + 2)
    .trim()
    .split(" ");
  const nice = Number(fields[16]);
  const policy = Number(fields[38]);
  if (fields[38] === undefined || !Number.isInteger(nice) || !Number.isInteger(policy)) return null;
  return { name: text.slice(open + 1, close), policy, nice };
}

/** Every thread of a process (default: this one) with its name, policy and nice value; [] without /proc. */
export function readThreads(pid: number | "self" = "self"): ThreadInfo[] {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const out: ThreadInfo[] = [];
  for (const tid of tids) {
    try {
      const stat = parseThreadStat(readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8"));
      if (stat) out.push({ tid: Number(tid), ...stat });
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}

/** A policy's name for messages and tables (SCHED_OTHER, SCHED_IDLE, ...). */
export function policyName(policy: number): string {
  return (
    ["SCHED_OTHER", "SCHED_FIFO", "SCHED_RR", "SCHED_BATCH", "SCHED_ISO", "SCHED_IDLE", "SCHED_DEADLINE"][policy] ?? `policy ${policy}`
  );
}
