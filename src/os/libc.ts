// The few C library calls Burrow makes itself (Linux, through bun:ffi): a thread's scheduling policy
// (thread-priority.ts) and giving back pages (code-pages.ts). Opened once per thread on first use; null where
// there is no glibc to open.

export interface Libc {
  sched_setscheduler(pid: number, policy: number, param: Int32Array): number;
  madvise(addr: bigint, length: bigint, advice: number): number;
}

let opened: Libc | null | undefined;

export function libc(): Libc | null {
  if (opened !== undefined) return opened;
  opened = null;
  if (process.platform !== "linux") return null;
  try {
    const { dlopen } = require("bun:ffi") as typeof import("bun:ffi");
    const lib = dlopen("libc.so.6", {
      sched_setscheduler: { args: ["i32", "i32", "ptr"], returns: "i32" },
      madvise: { args: ["u64", "u64", "i32"], returns: "i32" },
    });
    const s = lib.symbols;
    opened = {
      sched_setscheduler: (pid, policy, param) => s.sched_setscheduler(pid, policy, param),
      madvise: (addr, length, advice) => s.madvise(addr, length, advice),
    };
  } catch {
    opened = null;
  }
  return opened;
}
