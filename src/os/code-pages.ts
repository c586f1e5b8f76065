// Giving back the executable's code pages that only start-up touched (Linux). Start-up runs code that an idle or
// serving process never runs again (JavaScriptCore's optimising compilers compiling route registration, module
// loading, SQLite's schema work); its pages stay mapped and count in the resident set until memory runs short.
// `releaseCodePages` unmaps the clean, read-only file-backed pages of the program's own mappings
// (madvise MADV_DONTNEED): they stay in the kernel's page cache and fault back in on their next use.
// Only mappings with no private copies (smaps "Anonymous: 0") are touched, so nothing written is ever dropped.
// Elsewhere it does nothing.

import { readFileSync, readlinkSync } from "node:fs";
import { libc } from "./libc.ts";

const MADV_DONTNEED = 4;

/** A mapping's first line in /proc/<pid>/maps and smaps: range, permissions, offset, device, inode, path. */
const MAPPING = /^([0-9a-f]+)-([0-9a-f]+) (\S{4}) \S+ \S+ \d+\s*(.*)$/;

export interface CodeMapping {
  start: bigint;
  end: bigint;
  perms: string;
  path: string;
  rssKb: number;
  anonymousKb: number;
}

/** The mappings of /proc/<pid>/smaps text (pure). */
export function parseSmaps(text: string): CodeMapping[] {
  const out: CodeMapping[] = [];
  let cur: CodeMapping | null = null;
  for (const line of text.split("\n")) {
    const head = MAPPING.exec(line);
    if (head) {
      cur = {
        start: BigInt(`0x${head[1]}`),
        end: BigInt(`0x${head[2]}`),
        perms: head[3]!,
        path: head[4]!.trim(),
        rssKb: 0,
        anonymousKb: 0,
      };
      out.push(cur);
      continue;
    }
    if (!cur) continue;
    const field = /^(Rss|Anonymous):\s+(\d+) kB/.exec(line);
    if (field) {
      if (field[1] === "Rss") cur.rssKb = Number(field[2]);
      else cur.anonymousKb = Number(field[2]);
    }
  }
  return out;
}

/**
 * Which mappings may be released: the given file's read-only ones (code and constants) with no private copies,
 * and only where /proc/<pid>/maps shows the same range of the same file. Under an emulator (qemu-user), smaps
 * may describe the emulator's own address space while maps is the program's; a range the two disagree on is
 * left alone.
 */
export function releasable(mappings: CodeMapping[], path: string, mapsText: string): CodeMapping[] {
  const ranges = new Set<string>();
  for (const line of mapsText.split("\n")) {
    const m = MAPPING.exec(line);
    if (m && m[4]!.trim() === path) ranges.add(`${BigInt(`0x${m[1]}`)}-${BigInt(`0x${m[2]}`)}`);
  }
  return mappings.filter(
    (m) =>
      m.path === path &&
      (m.perms === "r-xp" || m.perms === "r--p") &&
      m.anonymousKb === 0 &&
      m.rssKb > 0 &&
      ranges.has(`${m.start}-${m.end}`),
  );
}

/** Release the program's start-up code pages; answers the kB that were resident in what was released (0 elsewhere). */
export function releaseCodePages(): number {
  const c = libc();
  if (!c) return 0;
  try {
    const exe = readlinkSync("/proc/self/exe");
    const targets = releasable(parseSmaps(readFileSync("/proc/self/smaps", "utf8")), exe, readFileSync("/proc/self/maps", "utf8"));
    let kb = 0;
    for (const m of targets) if (c.madvise(m.start, m.end - m.start, MADV_DONTNEED) === 0) kb += m.rssKb;
    return kb;
  } catch {
    return 0;
  }
}

/**
 * Release the start-up pages once start-up has settled (`settleMs` after this call), then again whenever the
 * server has gone quiet after serving (fewer than one request a second over a whole `quietMs`, so health checks
 * and a status page left open still count as quiet), so a server left idle after a burst gives back what the
 * burst touched. `served` counts the requests answered so far. Answers a stop function.
 */
export function keepCodePagesReleased(
  served: () => number,
  opts: { settleMs?: number; quietMs?: number; release?: () => number } = {},
): () => void {
  const release = opts.release ?? releaseCodePages;
  const quietMs = opts.quietMs ?? 30_000;
  let releasedAt = -1;
  let seen = served();
  const settle = setTimeout(() => {
    release();
    releasedAt = served();
  }, opts.settleMs ?? 2000);
  settle.unref?.();
  const tick = setInterval(() => {
    const now = served();
    if (releasedAt >= 0 && now - seen < quietMs / 1000 && now !== releasedAt) {
      release();
      releasedAt = now;
    }
    seen = now;
  }, quietMs);
  tick.unref?.();
  return () => {
    clearTimeout(settle);
    clearInterval(tick);
  };
}
