// Custom code jobs (docs/api/custom-code.md#jobs, docs/api/admin.md#jobs) with the scheduler's clock in the
// test's hands: a job runs at its occurrence once and writes through services.data, its history holds status,
// duration and log lines; run now; a throwing job and a job past its timeout; an occurrence coming while a run is
// under way is skipped; two schedulers on one store (two nodes) run an occurrence once; occurrences that passed
// while no node ran are missed, and run once at start under "run once"; production runs its newest version's
// jobs and a deploy swaps them; the admin API's errors and roles.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { type JobRun, JobRuns } from "../../src/code/job-runs.ts";
import { JobScheduler, type JobView } from "../../src/code/job-scheduler.ts";
import { isPrivateAddress, publicOnlyLookup } from "../../src/net/public-address.ts";
import { makeTestApp, tempDir, type TestApp } from "../helpers/app.ts";
import { upload } from "../helpers/code.ts";

/** A clock the scheduler reads, and a walk through time the way its timer would look (each run ends first). */
function clocked(start: string) {
  const clock = { t: Date.parse(start) };
  const walk = async (app: TestApp, to: string) => {
    const end = Date.parse(to);
    for (let m = Math.floor(clock.t / 60_000) * 60_000 + 60_500; m < end; m += 60_000) {
      clock.t = m;
      await app.burrow.jobs.tick();
      await app.burrow.jobs.idle();
    }
    clock.t = end;
    await app.burrow.jobs.tick();
    await app.burrow.jobs.idle();
  };
  return { clock, now: () => clock.t, walk };
}

type Run = JobRun;
type Job = JobView;

async function jobsOf(t: TestApp, env = "development"): Promise<Record<string, Job>> {
  const r = await t.admin("GET", `/jobs?env=${env}`);
  expect(r.status).toBe(200);
  return Object.fromEntries((r.body.jobs as Job[]).map((j) => [j.name, j]));
}

async function codeLog(t: TestApp, env = "development"): Promise<{ level: string; message: string; details: any }[]> {
  return (await t.admin("GET", `/logs?source=code&env=${env}&limit=1000`)).body;
}

describe("one node", () => {
  const { clock, now, walk } = clocked("2030-01-07T08:03:00Z");
  let t: TestApp;
  // A server the "gated" job waits on while the gate is shut ("gate.test" is public to this test's guard).
  let gate: ReturnType<typeof Bun.serve>;
  let shut: { release(): void; arrived: Promise<void>; arrive(): void; open: Promise<void> } | null = null;
  const shutGate = () => {
    let release = () => {};
    let arrive = () => {};
    const open = new Promise<void>((r) => (release = r));
    const arrived = new Promise<void>((r) => (arrive = r));
    shut = { release, arrive, arrived, open };
    return shut;
  };

  const code = () => `
export const jobs = [
  { name: "counter", schedule: "*/5 * * * *", async run(job, services) {
      services.log.info("counting " + job.occurrence);
      await services.data.create("tick", { occurrence: job.occurrence, trigger: job.trigger, run: job.run, name: job.name });
      return { done: true };
  } },
  { name: "thrower", schedule: "30 8 * * *", run(job, services) { services.log.warn("about to fail"); throw new TypeError("boom at " + job.occurrence); } },
  { name: "sleeper", schedule: "0 0 1 1 *", timeoutMs: 200, async run() { await new Promise(() => {}); } },
  { name: "gated", schedule: "*/15 * * * *", async run(job, services) {
      const r = await services.http.get("http://gate.test:${gate.port}/");
      services.log.info("gate " + r.body);
  } },
];`;

  beforeAll(async () => {
    const lookup = publicOnlyLookup(
      (host, cb) =>
        host === "gate.test"
          ? cb(null, [{ address: "127.0.0.2", family: 4 }])
          : cb(Object.assign(new Error("no such name"), { code: "ENOTFOUND" }), []),
      (bytes) => !(bytes.length === 4 && bytes[0] === 127 && bytes[3] === 2) && isPrivateAddress(bytes),
    );
    gate = Bun.serve({
      hostname: "127.0.0.2",
      port: 0,
      async fetch() {
        const s = shut;
        if (s) {
          s.arrive();
          await s.open;
        }
        return new Response("open");
      },
    });
    t = await makeTestApp({ open: { httpLookup: lookup, jobClock: now } });
    const put = await t.admin("PUT", "/schemas/tick", {
      fields: { occurrence: { type: "string" }, trigger: { type: "string" }, run: { type: "string" }, name: { type: "string" } },
    });
    expect(put.status).toBe(201);
    const r = await upload(t, code());
    expect(r.status).toBe(200);
    expect(r.body.jobs.map((j: { name: string }) => j.name)).toEqual(["counter", "thrower", "sleeper", "gated"]);
    await t.burrow.jobs.tick();
  });
  afterAll(async () => {
    shut?.release();
    await t.burrow.jobs.idle();
    gate.stop(true);
    await t.close();
  });

  const ticks = async (env = "development") =>
    ((await t.admin("GET", `/data/${env}/tick`)).body as { occurrence: string; trigger: string; run: string; name: string }[]).sort(
      (a, b) => a.occurrence.localeCompare(b.occurrence),
    );

  test("lists each job with its schedule, time zone, timeout and next five occurrences", async () => {
    const jobs = await jobsOf(t);
    expect(Object.keys(jobs)).toEqual(["counter", "thrower", "sleeper", "gated"]);
    expect(jobs.counter).toEqual({
      name: "counter",
      schedule: "*/5 * * * *",
      timezone: "UTC",
      timeoutMs: 25_000,
      next: ["08:05", "08:10", "08:15", "08:20", "08:25"].map((hm) => `2030-01-07T${hm}:00.000Z`),
      running: false,
      runs: [],
    });
    expect([jobs.sleeper!.timeoutMs, jobs.sleeper!.next[0], jobs.thrower!.next[0]]).toEqual([
      200,
      "2031-01-01T00:00:00.000Z",
      "2030-01-07T08:30:00.000Z",
    ]);
  });

  test("a job runs at its occurrence once, writes through services.data; its history has status, duration and log lines", async () => {
    await walk(t, "2030-01-07T08:05:00.400Z");
    // Looking again, at once or later within the minute, starts nothing more.
    await t.burrow.jobs.tick();
    await walk(t, "2030-01-07T08:05:40Z");
    const [run, ...others] = (await jobsOf(t)).counter!.runs;
    expect(others).toEqual([]);
    expect(run).toMatchObject({
      trigger: "schedule",
      status: "ok",
      occurrence: "2030-01-07T08:05:00.000Z",
      started: "2030-01-07T08:05:00.400Z",
      error: null,
      log: ["info: counting 2030-01-07T08:05:00.000Z"],
    });
    expect(run!.durationMs).toBeGreaterThanOrEqual(0);
    expect(await ticks()).toEqual(
      [{ occurrence: "2030-01-07T08:05:00.000Z", trigger: "schedule", run: run!.id, name: "counter" }].map((x) =>
        expect.objectContaining(x),
      ),
    );
    await walk(t, "2030-01-07T08:15:00.300Z");
    const runs = (await jobsOf(t)).counter!.runs;
    expect(runs.map((r) => [r.occurrence.slice(11, 16), r.status])).toEqual([
      ["08:15", "ok"],
      ["08:10", "ok"],
      ["08:05", "ok"],
    ]);
    expect((await ticks()).map((x) => x.occurrence.slice(11, 16))).toEqual(["08:05", "08:10", "08:15"]);
    const one = await t.admin("GET", `/jobs/counter/runs/${runs[0]!.id}`);
    expect([one.status, one.body]).toEqual([200, runs[0]]);
    // The gated job ran at 08:15 too (its gate is open).
    expect((await jobsOf(t)).gated!.runs.map((r) => [r.status, r.log])).toEqual([["ok", ["info: gate open"]]]);
  });

  test("a job that throws fails: its error is in the history and in the code log", async () => {
    await walk(t, "2030-01-07T08:30:00.500Z");
    const [run] = (await jobsOf(t)).thrower!.runs;
    expect(run).toMatchObject({
      trigger: "schedule",
      status: "failed",
      occurrence: "2030-01-07T08:30:00.000Z",
      error: "TypeError: boom at 2030-01-07T08:30:00.000Z",
      log: ["warn: about to fail"],
    });
    const line = (await codeLog(t)).find((l) => l.message.startsWith("custom code job thrower"));
    expect(line).toMatchObject({
      level: "error",
      message: "custom code job thrower failed: TypeError: boom at 2030-01-07T08:30:00.000Z",
      details: { job: "thrower", run: run!.id, kind: "thrown" },
    });
  });

  test("run now: 202 with the run's id, then its history (trigger manual)", async () => {
    const r = await t.admin("POST", "/jobs/counter/run?env=development");
    expect(r.status).toBe(202);
    expect(r.body.run).toMatch(/^[0-9a-f]{16}$/);
    await t.burrow.jobs.idle();
    const run = await t.admin("GET", `/jobs/counter/runs/${r.body.run}`);
    expect(run.body).toMatchObject({ id: r.body.run, trigger: "manual", status: "ok", occurrence: new Date(clock.t).toISOString() });
    expect((await jobsOf(t)).counter!.runs[0]!.id).toBe(r.body.run);
    expect((await ticks()).filter((x) => x.trigger === "manual").map((x) => x.run)).toEqual([r.body.run]);
  });

  test("a job past its timeoutMs ends as timeout", async () => {
    const r = await t.admin("POST", "/jobs/sleeper/run");
    expect(r.status).toBe(202);
    await t.burrow.jobs.idle();
    const run = (await t.admin("GET", `/jobs/sleeper/runs/${r.body.run}`)).body;
    expect(run).toMatchObject({ status: "timeout", error: "the job ran longer than 200 ms" });
    expect(run.durationMs).toBeGreaterThanOrEqual(150);
    expect((await codeLog(t)).some((l) => l.message === "custom code job sleeper timed out: the job ran longer than 200 ms")).toBe(true);
  });

  test("never two runs at once: run now is 409 while one is under way, and an occurrence coming meanwhile is skipped", async () => {
    const s = shutGate();
    const r = await t.admin("POST", "/jobs/gated/run");
    expect(r.status).toBe(202);
    await s.arrived;
    expect((await jobsOf(t)).gated!.running).toBe(true);
    const again = await t.admin("POST", "/jobs/gated/run");
    expect([again.status, again.body.error]).toEqual([409, "job gated is running now; wait for its run to end"]);
    // 08:45 comes while the manual run waits at the gate.
    clock.t = Date.parse("2030-01-07T08:45:00.200Z");
    await t.burrow.jobs.tick();
    const during = (await jobsOf(t)).gated!.runs;
    expect(during.slice(0, 2).map((x) => [x.trigger, x.status, x.error])).toEqual([
      ["schedule", "skipped", "the previous run was still running"],
      ["manual", "running", null],
    ]);
    expect(during[0]!.occurrence).toBe("2030-01-07T08:45:00.000Z");
    s.release();
    shut = null;
    await t.burrow.jobs.idle();
    const after = (await jobsOf(t)).gated!;
    expect([after.running, after.runs[1]!.id, after.runs[1]!.status, after.runs[1]!.log]).toEqual([
      false,
      r.body.run,
      "ok",
      ["info: gate open"],
    ]);
  });

  test("two schedulers on one store (two nodes) run an occurrence once", async () => {
    const b = t.burrow;
    const other = new JobScheduler({
      code: b.code,
      catalog: b.catalog,
      envDbs: b.envDbs,
      settings: b.settings,
      logs: b.logs,
      runs: new JobRuns(b.system),
      log: b.log,
      fileBase: () => "http://localhost",
      now,
    });
    await other.tick();
    await walk(t, "2030-01-07T08:49:00Z");
    await other.tick();
    for (const at of ["2030-01-07T08:50:00.100Z", "2030-01-07T08:55:00.900Z", "2030-01-07T09:00:00.300Z"]) {
      clock.t = Date.parse(at);
      await Promise.all([b.jobs.tick(), other.tick(), other.tick()]);
      await Promise.all([b.jobs.idle(), other.idle()]);
    }
    other.close();
    const runs = (await jobsOf(t)).counter!.runs.filter((r) => r.trigger === "schedule");
    expect(runs.slice(0, 3).map((r) => [r.occurrence.slice(11, 16), r.status])).toEqual([
      ["09:00", "ok"],
      ["08:55", "ok"],
      ["08:50", "ok"],
    ]);
    const written = (await ticks()).filter((x) => x.trigger === "schedule").map((x) => x.occurrence.slice(11, 16));
    expect(written.slice(-3)).toEqual(["08:50", "08:55", "09:00"]);
    expect(new Set(written).size).toBe(written.length);
  });

  test("a run left running by a node that stopped is failed once past its deadline; the job may run again", async () => {
    const id = "feedfacefeedface";
    const claim = { id, env: "development" as const, job: "thrower", occurrence: clock.t, trigger: "manual" as const };
    expect(await new JobRuns(t.burrow.system).claim({ ...claim, started: clock.t, deadline: clock.t + 60_000 }, clock.t)).toBe(true);
    expect((await jobsOf(t)).thrower!.running).toBe(true);
    expect((await t.admin("POST", "/jobs/thrower/run")).status).toBe(409);
    await walk(t, new Date(clock.t + 3 * 60_000).toISOString());
    const run = (await t.admin("GET", `/jobs/thrower/runs/${id}`)).body;
    expect(run).toMatchObject({ status: "failed", error: "the node running it stopped before it ended" });
    expect((await jobsOf(t)).thrower!.running).toBe(false);
    const again = await t.admin("POST", "/jobs/thrower/run");
    expect(again.status).toBe(202);
    await t.burrow.jobs.idle();
  });

  test("bad environments, unknown jobs and runs, and the runs parameter are refused", async () => {
    const cases: [string, string, number, string][] = [
      ["GET", "/jobs?env=staging", 404, 'unknown environment "staging"; use development or production'],
      ["POST", "/jobs/counter/run?env=staging", 404, 'unknown environment "staging"; use development or production'],
      ["POST", "/jobs/nope/run", 404, 'there is no job "nope" in development'],
      ["POST", "/jobs/counter/run?env=production", 404, 'there is no job "counter" in production'],
      ["GET", "/jobs/counter/runs/0123456789abcdef", 404, 'job counter in development has no run "0123456789abcdef"'],
      ["GET", "/jobs?runs=0", 400, "runs must be an integer from 1 to 100"],
      ["GET", "/jobs?runs=101", 400, "runs must be an integer from 1 to 100"],
    ];
    for (const [method, path, status, error] of cases) {
      const r = await t.admin(method, path);
      expect([method, path, r.status, r.body.error]).toEqual([method, path, status, error]);
    }
    expect((await t.admin("GET", "/jobs?env=production")).body).toEqual({ jobs: [] });
    expect((await t.admin("GET", "/jobs?runs=1")).body.jobs[0].runs.length).toBe(1);
  });

  test("a viewer reads jobs and runs but may not start one", async () => {
    const viewer = { email: "jobs-viewer@example.com", password: "viewer password 1", role: "viewer" };
    expect((await t.admin("POST", "/admins", viewer)).status).toBe(201);
    const token = (await t.request("POST", "/_admin/api/login", { body: viewer, key: null, version: null })).body.token;
    const as = (method: string, path: string) =>
      t.request(method, `/_admin/api${path}`, { key: null, version: null, headers: { authorization: `Bearer ${token}` } });
    expect((await as("GET", "/jobs")).status).toBe(200);
    const r = await as("POST", "/jobs/counter/run");
    expect([r.status, r.body.error]).toEqual([403, "this needs the editor role; jobs-viewer@example.com is a viewer"]);
    expect((await t.request("GET", "/_admin/api/jobs", { key: null, version: null })).status).toBe(401);
  });

  test("production runs the jobs of its newest version; a deploy swaps them", async () => {
    const stamp = (v: string) =>
      `export const jobs = [{ name: "stamp_${v}", schedule: "*/10 * * * *", async run(job, s) { await s.data.create("tick", { occurrence: job.occurrence, trigger: "${v}", run: job.run, name: job.name }); } }];`;
    expect((await upload(t, stamp("v1"))).status).toBe(200);
    expect((await t.admin("POST", "/deploy", {})).status).toBe(200);
    expect((await upload(t, stamp("v2"))).status).toBe(200);
    expect(Object.keys(await jobsOf(t, "production"))).toEqual(["stamp_v1"]);
    expect(Object.keys(await jobsOf(t))).toEqual(["stamp_v2"]);
    await walk(t, "2030-01-07T09:10:00.500Z");
    expect((await ticks("production")).map((x) => [x.occurrence.slice(11, 16), x.trigger])).toEqual([["09:10", "v1"]]);
    expect((await ticks()).filter((x) => x.trigger === "v2").map((x) => x.occurrence.slice(11, 16))).toEqual(["09:10"]);
    expect((await t.admin("POST", "/deploy", {})).status).toBe(200);
    expect(Object.keys(await jobsOf(t, "production"))).toEqual(["stamp_v2"]);
    await walk(t, "2030-01-07T09:20:00.500Z");
    expect((await ticks("production")).map((x) => [x.occurrence.slice(11, 16), x.trigger])).toEqual([
      ["09:10", "v1"],
      ["09:20", "v2"],
    ]);
    const prod = await jobsOf(t, "production");
    expect(prod.stamp_v2!.runs.map((r) => [r.occurrence.slice(11, 16), r.status])).toEqual([["09:20", "ok"]]);
  });

  test("the newest 100 runs of a job are kept", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 103; i++) {
      const r = await t.admin("POST", "/jobs/stamp_v2/run");
      expect(r.status).toBe(202);
      ids.push(r.body.run);
      await t.burrow.jobs.idle();
    }
    const kept = (await t.admin("GET", "/jobs?runs=100")).body.jobs[0].runs as Run[];
    expect(kept.map((r) => r.id)).toEqual(ids.slice(-100).reverse());
    expect((await t.admin("GET", `/jobs/stamp_v2/runs/${ids[0]}`)).status).toBe(404);
  }, 60_000);
});

describe("while no node runs", () => {
  const { clock, now, walk } = clocked("2030-03-01T09:59:00Z");
  const dir = tempDir("burrow-jobs-missed-");
  const CODE = `export const jobs = [
    { name: "hourly", schedule: "0 * * * *", run(job, s) { s.log.info(job.trigger + " " + job.occurrence); } },
    { name: "morning", schedule: "0 7 * * *", run() {} },
  ];`;
  /** The server started at `at` (the clock moved there while it was down): it looks once, its runs end, then `check`. */
  const session = async (check: (t: TestApp) => Promise<void>, at?: string) => {
    if (at) clock.t = Date.parse(at);
    const t = await makeTestApp({ dir, open: { jobClock: now } });
    try {
      await t.burrow.jobs.tick();
      await t.burrow.jobs.idle();
      await check(t);
    } finally {
      await t.close();
    }
  };
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const hourly = async (t: TestApp) =>
    (await jobsOf(t)).hourly!.runs.map((r) => [r.occurrence.slice(11, 16), r.trigger, r.status, r.error?.slice(0, 32) ?? null]);

  test("occurrences that passed are recorded as missed; under run once the job runs once at start; a late one still runs", async () => {
    await session(async (t) => {
      expect((await upload(t, CODE)).status).toBe(200);
      await walk(t, "2030-03-01T10:00:00.500Z");
      expect(await hourly(t)).toEqual([["10:00", "schedule", "ok", null]]);
    });

    // Down from 10:00 to 13:20: 11:00, 12:00 and 13:00 passed (skip: recorded, not run).
    await session(async (t) => {
      expect(await hourly(t)).toEqual([
        ["13:00", "schedule", "missed", "no node was running at this time"],
        ["12:00", "schedule", "missed", "no node was running at this time"],
        ["11:00", "schedule", "missed", "no node was running at this time"],
        ["10:00", "schedule", "ok", null],
      ]);
      // A second look (or another node starting) records nothing twice.
      await t.burrow.jobs.tick();
      expect((await hourly(t)).length).toBe(4);
      expect((await codeLog(t)).map((l) => [l.level, l.message])).toContainEqual([
        "warn",
        "custom code job hourly missed 3 occurrences while no node was running",
      ]);
      expect((await t.admin("PUT", "/settings/development", { code: { jobs: { missed: "run once" } } })).status).toBe(200);
    }, "2030-03-01T13:20:00Z");

    // Down from 13:20 to 16:30 with "run once": 14:00 and 15:00 missed, the job runs once for 16:00.
    await session(async (t) => {
      expect((await hourly(t)).slice(0, 3)).toEqual([
        ["16:00", "missed", "ok", null],
        ["15:00", "schedule", "missed", "no node was running at this time"],
        ["14:00", "schedule", "missed", "no node was running at this time"],
      ]);
      expect((await jobsOf(t)).hourly!.runs[0]!.log).toEqual(["info: missed 2030-03-01T16:00:00.000Z"]);
      expect((await codeLog(t)).map((l) => l.message)).toContain(
        "custom code job hourly missed 3 occurrences while no node was running; it runs once now",
      );
      await walk(t, "2030-03-01T16:40:00Z");
    }, "2030-03-01T16:30:00Z");

    // Down for 50 s across 17:00: the occurrence is late, not missed, and runs as scheduled.
    await session(async (t) => {
      expect((await hourly(t)).slice(0, 2)).toEqual([
        ["17:00", "schedule", "ok", null],
        ["16:00", "missed", "ok", null],
      ]);
    }, "2030-03-01T17:00:30Z");
  });

  test("schedules are read in code.timezone", async () => {
    await session(async (t) => {
      expect((await jobsOf(t)).morning!.next[0]).toBe("2030-03-02T07:00:00.000Z");
      expect((await t.admin("PUT", "/settings/development", { code: { timezone: "Europe/Berlin" } })).status).toBe(200);
      const morning = (await jobsOf(t)).morning!;
      expect([morning.timezone, morning.next[0]]).toEqual(["Europe/Berlin", "2030-03-02T06:00:00.000Z"]);
      const bad = await t.admin("PUT", "/settings/development", { code: { timezone: "Mars/Olympus" } });
      expect(bad.status).toBe(400);
    });
  });
});
