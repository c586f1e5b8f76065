// Giving back start-up code pages (src/os/code-pages.ts): which mappings qualify (smaps parsed from a sample), when
// the keeper releases (timers of a few ms, a fake release), and a real release in a child process that then goes
// on computing, opening SQLite and compiling code as before.

import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { keepCodePagesReleased, parseSmaps, releasable } from "../../src/os/code-pages.ts";

const EXE = "/usr/local/bin/burrow";
/** One mapping as smaps shows it: its first line, then the resident and the privately copied kB. */
const mapping = (range: string, perms: string, offset: string, path: string, rssKb: number, anonymousKb: number) =>
  [
    `${range} ${perms} ${offset} 08:01 131 ${path}`,
    `Rss: ${String(rssKb).padStart(18)} kB`,
    `Anonymous: ${String(anonymousKb).padStart(12)} kB`,
  ].join("\n");
const SAMPLE = [
  mapping("55d0c0000000-55d0c2000000", "r--p", "00000000", EXE, 9000, 0),
  mapping("55d0c2000000-55d0c6000000", "r-xp", "02000000", EXE, 33000, 0),
  mapping("55d0c6000000-55d0c6100000", "r--p", "06000000", EXE, 1024, 1024),
  mapping("55d0c6100000-55d0c6200000", "rw-p", "06100000", EXE, 512, 100),
  mapping("55d0c6200000-55d0c6300000", "r--p", "06200000", EXE, 0, 0),
  mapping("7f0000000000-7f0000200000", "r-xp", "00000000", "/usr/lib/x86_64-linux-gnu/libc.so.6", 1200, 0),
  mapping("7f0000400000-7f0000500000", "rw-p", "00000000", "", 900, 900),
  mapping("7ffd00000000-7ffd00021000", "rw-p", "00000000", "                         [stack]", 40, 40),
  "",
].join("\n");

/** /proc/<pid>/maps of the same process: the header lines of the sample. */
const MAPS = SAMPLE.split("\n")
  .filter((l) => /^[0-9a-f]+-/.test(l))
  .join("\n");

describe("which mappings are released", () => {
  test("smaps parsed: ranges, permissions, paths, resident and private kB", () => {
    const maps = parseSmaps(SAMPLE);
    expect(maps.length).toBe(8);
    expect(maps[1]).toEqual({ start: 0x55d0c2000000n, end: 0x55d0c6000000n, perms: "r-xp", path: EXE, rssKb: 33000, anonymousKb: 0 });
    expect(maps[6]!.path).toBe("");
    expect(maps[7]!.path).toBe("[stack]");
  });

  test("only the program's own read-only mappings with resident pages and no private copies", () => {
    const picked = releasable(parseSmaps(SAMPLE), EXE, MAPS);
    // Not the relocated constants (private copies), the writable data, an empty mapping, libc, the heap or the stack.
    expect(picked.map((m) => [m.perms, m.rssKb])).toEqual([
      ["r--p", 9000],
      ["r-xp", 33000],
    ]);
  });

  test("nothing from an empty or foreign smaps", () => {
    expect(releasable(parseSmaps(""), EXE, MAPS)).toEqual([]);
    expect(releasable(parseSmaps(SAMPLE), "/other/program", MAPS)).toEqual([]);
  });

  test("nothing where maps and smaps disagree (an emulator's smaps of its own address space)", () => {
    // qemu-user with a guest base: the program sees its mappings elsewhere than smaps reports them.
    const shifted = MAPS.replace(/^55d0c/gm, "00001");
    expect(releasable(parseSmaps(SAMPLE), EXE, shifted)).toEqual([]);
    // The same ranges with other permissions (qemu maps guest code without execute): still the same pages.
    const guestView = MAPS.replace(/r--p 00000000 08:01 131/, "r-xp 00000000 08:01 131");
    expect(releasable(parseSmaps(SAMPLE), EXE, guestView).length).toBe(2);
  });
});

describe("when the keeper releases", () => {
  test("once start-up settles, then after a quiet interval that followed requests, never while busy", async () => {
    let served = 0;
    const releases: number[] = [];
    const stop = keepCodePagesReleased(() => served, { settleMs: 20, quietMs: 100, release: () => (releases.push(served), 1) });
    try {
      await Bun.sleep(60);
      expect(releases).toEqual([0]); // start-up settled
      await Bun.sleep(150);
      expect(releases).toEqual([0]); // nothing served since: nothing to give back
      // Busy: more than one request a second throughout two intervals.
      for (let i = 0; i < 10; i++) {
        served += 5;
        await Bun.sleep(20);
      }
      const whileBusy = releases.length;
      // Quiet again: released once within the next two intervals, and not again while nothing is served.
      await Bun.sleep(300);
      expect(releases.length).toBe(whileBusy + 1);
      expect(releases.at(-1)).toBe(50);
      await Bun.sleep(250);
      expect(releases.length).toBe(whileBusy + 1);
    } finally {
      stop();
    }
  });

  test("a stopped keeper never releases", async () => {
    let count = 0;
    const stop = keepCodePagesReleased(() => 0, { settleMs: 10, quietMs: 10, release: () => ++count });
    stop();
    await Bun.sleep(50);
    expect(count).toBe(0);
  });
});

test.skipIf(process.platform !== "linux")("a real release: the resident file pages drop and the process works on", async () => {
  const script = `
    import { releaseCodePages } from ${JSON.stringify(join(import.meta.dir, "../../src/os/code-pages.ts"))};
    import { Database } from "bun:sqlite";
    import { readFileSync } from "node:fs";
    const file = () => Number(/RssFile:\\s+(\\d+)/.exec(readFileSync("/proc/self/status", "utf8"))[1]);
    const before = file();
    const released = releaseCodePages();
    const after = file();
    const db = new Database(":memory:");
    db.run("create table t (a integer)");
    for (let i = 0; i < 1000; i++) db.run("insert into t values (?)", [i]);
    const sum = db.query("select sum(a) as s from t").get().s;
    const f = new Function("n", "let s = 0; for (let i = 0; i < n; i++) s += i; return s");
    console.log(JSON.stringify({ before, released, after, sum, loop: f(1e6), json: JSON.parse(JSON.stringify({ a: [1, 2] })) }));
  `;
  const proc = Bun.spawnSync([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" });
  expect(proc.stderr.toString()).toBe("");
  const out = JSON.parse(proc.stdout.toString()) as {
    before: number;
    released: number;
    after: number;
    sum: number;
    loop: number;
    json: unknown;
  };
  expect(out.released).toBeGreaterThan(4096);
  expect(out.after).toBeLessThan(out.before - 4096);
  expect([out.sum, out.loop, out.json]).toEqual([499500, 499999500000, { a: [1, 2] }]);
});
