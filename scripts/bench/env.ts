// Shared benchmark plumbing: the machine description, the built binary, and writing result tables into
// docs/benchmarks.md between markers so a rerun replaces its own section.

import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";

export const ROOT = join(import.meta.dir, "../..");
export const BINARY = join(ROOT, "dist/burrow");

export function machine(): string {
  const cpu = cpus();
  return `${cpu[0]?.model ?? "unknown CPU"}, ${cpu.length} cores, ${(totalmem() / 1024 ** 3).toFixed(0)} GiB, Bun ${Bun.version}, ${new Date().toISOString().slice(0, 10)}`;
}

export function ensureBinary(rebuild: boolean): string {
  if (rebuild || !existsSync(BINARY)) {
    const p = Bun.spawnSync([process.execPath, "run", "scripts/build.ts"], { cwd: ROOT, stdout: "inherit", stderr: "inherit" });
    if (p.exitCode !== 0) throw new Error("build failed");
  }
  return BINARY;
}

/** Build the baseline binary from a worktree of the given commit (node_modules borrowed from this checkout). */
export function buildBaseline(ref: string): { exe: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), "burrow-baseline-"));
  const git = (...args: string[]) => {
    const p = Bun.spawnSync(["git", ...args], { cwd: ROOT, stderr: "pipe" });
    if (p.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${p.stderr.toString()}`);
  };
  git("worktree", "add", "--detach", dir, ref);
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  const exe = join(dir, "dist/burrow");
  const p = Bun.spawnSync([process.execPath, "run", "scripts/build.ts"], { cwd: dir, stdout: "inherit", stderr: "inherit" });
  if (p.exitCode !== 0 || !existsSync(exe)) throw new Error(`building ${ref} failed`);
  return { exe, cleanup: () => (git("worktree", "remove", "--force", dir), rmSync(dir, { recursive: true, force: true })) };
}

export function table(header: string[], rows: (string | number)[][]): string {
  const fmt = (v: string | number) => (typeof v === "number" ? (Number.isInteger(v) ? String(v) : v.toFixed(2)) : v);
  return [`| ${header.join(" | ")} |`, `|${header.map(() => "---").join("|")}|`, ...rows.map((r) => `| ${r.map(fmt).join(" | ")} |`)].join(
    "\n",
  );
}

/** Replace (or append) the section between <!-- bench:name --> markers in docs/benchmarks.md. */
export function writeSection(name: string, markdown: string): void {
  const file = join(ROOT, "docs/benchmarks.md");
  const start = `<!-- bench:${name} -->`;
  const end = `<!-- /bench:${name} -->`;
  const block = `${start}\n${markdown.trim()}\n${end}`;
  let doc = existsSync(file) ? readFileSync(file, "utf8") : "# Benchmarks\n";
  const i = doc.indexOf(start);
  const j = doc.indexOf(end);
  doc = i >= 0 && j > i ? doc.slice(0, i) + block + doc.slice(j + end.length) : `${doc.trimEnd()}\n\n${block}\n`;
  writeFileSync(file, doc);
}

/** CPU seconds a process has used so far (user + system), from /proc; null where /proc is absent. */
export function processCpuSeconds(pid: number): number | null {
  try {
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return null;
  }
}

/** Machine-wide CPU counters (jiffies) from /proc/stat, to report time the hypervisor stole during a run. */
export function cpuCounters(): { total: number; steal: number } | null {
  try {
    const f = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
    return { total: f.reduce((a, b) => a + b, 0), steal: f[7] ?? 0 };
  } catch {
    return null;
  }
}

/** Percentage of CPU time stolen between two cpuCounters() snapshots ("" when unknown). */
export function stealPercent(a: ReturnType<typeof cpuCounters>, b: ReturnType<typeof cpuCounters>): string {
  if (!a || !b || b.total === a.total) return "";
  return `${((100 * (b.steal - a.steal)) / (b.total - a.total)).toFixed(0)}%`;
}

/** The first line a child process prints (e.g. a server's "serving <url>"). */
export async function readFirstLine(stream: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stream.getReader();
  let s = "";
  while (!s.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    s += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return s;
}
