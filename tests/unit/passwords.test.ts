// Password hashing on the worker pool: argon2id hashes that verify, and a main thread that sleeps (does not
// spin) while it waits for the workers, which on a one-CPU machine would starve the low-priority hashing thread.

import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { hashPassword, verifyPassword } from "../../src/auth/passwords.ts";

test("hashes are argon2id and verify only the right password", async () => {
  const h = await hashPassword("correct horse");
  expect(h.startsWith("$argon2id$")).toBe(true);
  expect(await verifyPassword("correct horse", h)).toBe(true);
  expect(await verifyPassword("wrong horse", h)).toBe(false);
  expect(await verifyPassword("x", "not a hash")).toBe(false);
});

test.skipIf(!existsSync("/proc/thread-self/stat"))(
  "the main thread sleeps while a process with nothing else to do awaits hashing",
  async () => {
    // A process of its own: the test runner keeps its own event loop busy, which would hide a spinning wait.
    const script = `
    import { readFileSync } from "node:fs";
    import { hashPassword } from ${JSON.stringify(join(import.meta.dir, "../../src/auth/passwords.ts"))};
    const cpu = () => { const f = readFileSync("/proc/thread-self/stat", "utf8").split(") ")[1].split(" "); return (Number(f[11]) + Number(f[12])) * 10; };
    await hashPassword("warm-up");
    const c0 = cpu(), t0 = performance.now();
    for (let i = 0; i < 5; i++) await hashPassword("password-" + i);
    console.log(JSON.stringify({ mainCpuMs: cpu() - c0, wallMs: performance.now() - t0 }));`;
    const proc = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" });
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    expect(err).toBe("");
    expect(code).toBe(0);
    const { mainCpuMs, wallMs } = JSON.parse(out) as { mainCpuMs: number; wallMs: number };
    // Five hashes take some hundreds of milliseconds of wall time; a spinning main thread burns all of it.
    expect(mainCpuMs).toBeLessThan(Math.max(60, wallMs / 3));
  },
  30_000,
);

test("a verification waits for no queued hash: logins go ahead of sign-ups on the hashing threads", async () => {
  const { hasherThreads } = await import("../../src/auth/passwords.ts");
  const hash = await hashPassword("login-password");
  const done: string[] = [];
  // Hashes queued first (a flood of sign-ups), then one login's verification.
  const hashes = Array.from({ length: 6 * hasherThreads() }, (_, i) => hashPassword(`signup-${i}`).then(() => void done.push(`hash ${i}`)));
  const verify = verifyPassword("login-password", hash).then((ok) => void done.push(`verify ${ok}`));
  await Promise.all([...hashes, verify]);
  // At most the hashes already running on each thread finish before it (one job per thread at a time).
  expect(done.indexOf("verify true")).toBeLessThanOrEqual(hasherThreads());
  expect(done).toHaveLength(6 * hasherThreads() + 1);
});
