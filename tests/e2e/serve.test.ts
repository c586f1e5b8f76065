// `burrow serve` as a process: one server per data directory (an OS lock, gone with the process, kill -9
// included), start-up failures in one line with exit code 2, the version, a banner with commands that work
// from a checkout, the request log on stderr, and a shutdown that lets requests in flight finish.

import { afterAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { tempDir } from "../helpers/app.ts";
import { ROOT, runCli, startServerProcess } from "../helpers/spawn.ts";

const SOURCE = [process.execPath, join(ROOT, "src/main.ts")];
const dir = tempDir("burrow-serve-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const env = (data: string, more: Record<string, string> = {}) => ({
  BURROW_DIR: data,
  BURROW_DEV_PUBLIC_KEY: "serve-test-dev-key",
  ...more,
});
const oneLine = (stderr: string) => {
  const lines = stderr.trim().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toStartWith("burrow: ");
  expect(stderr).not.toContain("    at ");
  return lines[0]!;
};

describe("one server per data directory", () => {
  test("a second serve on the same directory refuses in one line with exit code 2; the lock dies with the first", async () => {
    const data = join(dir, "locked");
    const first = await startServerProcess(SOURCE, env(data));
    const second = await runCli(["serve", "--http", "127.0.0.1:0"], env(data));
    expect(second.code).toBe(2);
    expect(oneLine(second.stderr)).toContain(`the data directory ${data} is in use by another burrow serve`);
    // Another directory is not affected.
    const other = await startServerProcess(SOURCE, env(join(dir, "other")));
    expect(other.banner).toContain("serving");
    await other.stop();
    // kill -9: no shutdown code runs, yet the operating system drops the lock.
    first.proc.kill("SIGKILL");
    await first.proc.exited;
    const third = await startServerProcess(SOURCE, env(data));
    expect(third.banner).toContain("serving");
    expect(await third.stop()).toBe(0);
  });
});

describe("start-up failures", () => {
  test("address in use, an unusable data directory and a bad flag: one line each, exit code 2", async () => {
    const busy = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("taken") });
    try {
      const inUse = await runCli(["serve", "--http", `127.0.0.1:${busy.port}`], env(join(dir, "busy")));
      expect(inUse.code).toBe(2);
      expect(oneLine(inUse.stderr)).toContain(`cannot listen on 127.0.0.1:${busy.port}: the address is in use`);
    } finally {
      busy.stop(true);
    }
    // A data directory below a regular file can be neither created nor written (even by root).
    const file = join(dir, "a-file");
    writeFileSync(file, "not a directory");
    const unusable = await runCli(["serve", "--http", "127.0.0.1:0"], env(join(file, "data")));
    expect(unusable.code).toBe(2);
    expect(oneLine(unusable.stderr)).toContain(`cannot use the data directory ${join(file, "data")}`);
    const badFlag = await runCli(["serve", "--port", "80"], env(join(dir, "flag")));
    expect(badFlag.code).toBe(2);
    expect(oneLine(badFlag.stderr)).toContain("unknown option --port");
  });

  test("--version and version print the version of package.json", async () => {
    for (const args of [["--version"], ["version"]]) {
      const r = await runCli(args);
      expect([args, r.code, r.stdout.trim()]).toEqual([args, 0, `burrow ${pkg.version}`]);
    }
  });
});

describe("a running server", () => {
  test("the banner from a checkout names npm run burrow -- commands; requests are logged on stderr without secrets", async () => {
    const s = await startServerProcess(SOURCE, env(join(dir, "banner"), { BURROW_LOG_LEVEL: "info" }));
    try {
      expect(s.banner).toContain("npm run burrow -- keys");
      expect(s.banner).toContain("npm run burrow -- admin create");
      const h = {
        "x-service-api-key": "serve-test-dev-key",
        accept: "application/vnd.service+json; version=0",
        "content-type": "application/json",
      };
      const created = await fetch(`${s.url}/user`, {
        method: "POST",
        headers: h,
        body: JSON.stringify({ username: "ann", password: "very-secret-password" }),
      });
      expect(created.status).toBe(201);
      expect((await fetch(`${s.url}/user/accessToken?username=ann&password=very-secret-password`, { headers: h })).status).toBe(200);
      expect(
        (await fetch(`${s.url}/user/nobody`, { headers: { ...h, authorization: 'MAC id="tok-secret-id", ts="1", nonce="n", mac="m"' } }))
          .status,
      ).toBe(401);
      await Bun.sleep(100);
      const log = s.output().stderr;
      expect(log).toMatch(/INFO POST \/user 201 \d+\.\dms development\n/);
      expect(log).toMatch(/INFO GET \/user\/accessToken\?username&password 200 \d+\.\dms development\n/);
      expect(log).toMatch(/INFO GET \/user\/nobody 401 \d+\.\dms development\n/);
      for (const secret of ["very-secret-password", "tok-secret-id", "serve-test-dev-key"]) expect(log).not.toContain(secret);
    } finally {
      await s.stop();
    }
  });

  test("SIGTERM: the request in flight finishes, then a clean message and exit code 0", async () => {
    const s = await startServerProcess(SOURCE, env(join(dir, "shutdown"), { BURROW_LOG_LEVEL: "warn" }));
    // A create whose body is still arriving when the signal comes.
    let push!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({ start: (c) => void (push = c) });
    const inFlight = fetch(`${s.url}/note`, {
      method: "POST",
      headers: {
        "x-service-api-key": "serve-test-dev-key",
        accept: "application/vnd.service+json; version=0",
        "content-type": "application/json",
      },
      body,
    });
    push.enqueue(new TextEncoder().encode('{"text": "written during '));
    await Bun.sleep(150);
    s.proc.kill("SIGTERM");
    await Bun.sleep(150);
    expect(s.proc.exitCode).toBeNull();
    push.enqueue(new TextEncoder().encode('shutdown"}'));
    push.close();
    const r = await inFlight;
    expect(r.status).toBe(201);
    expect(((await r.json()) as { text: string }).text).toBe("written during shutdown");
    expect(await s.proc.exited).toBe(0);
    await Bun.sleep(20);
    const out = s.output().stdout;
    expect(out).toContain("Burrow stopping (SIGTERM)");
    expect(out).toContain("Burrow stopped");
    // The object was committed: a new server on the same directory reads it.
    const again = await startServerProcess(SOURCE, env(join(dir, "shutdown")));
    try {
      const list = await fetch(`${again.url}/note`, {
        headers: { "x-service-api-key": "serve-test-dev-key", accept: "application/vnd.service+json; version=0" },
      });
      expect(((await list.json()) as { text: string }[]).map((n) => n.text)).toEqual(["written during shutdown"]);
    } finally {
      await again.stop();
    }
  });
});

describe("production permissions", () => {
  test("deploy and every start print one warning line per production schema that anyone may change or delete", async () => {
    const data = join(dir, "warned");
    const defs = join(dir, "note.json");
    writeFileSync(
      defs,
      JSON.stringify({
        name: "note",
        fields: { text: { type: "string" } },
        permissions: { create: "open", read: "open", update: "open", delete: "owner" },
      }),
    );
    expect((await runCli(["schema", "apply", defs], env(data))).code).toBe(0);
    const deployed = await runCli(["deploy"], env(data));
    expect(deployed.code).toBe(0);
    const warning =
      'production schema "note" lets anyone with the public key change its objects (update: open); consider "owner" or stricter';
    expect(deployed.stderr.trim()).toBe(`warning: ${warning}`);
    const s = await startServerProcess(SOURCE, env(data, { BURROW_LOG_LEVEL: "warn" }));
    try {
      await Bun.sleep(50);
      const warns = s
        .output()
        .stderr.split("\n")
        .filter((l) => l.includes(" WARN "));
      expect(warns).toHaveLength(1);
      expect(warns[0]).toEndWith(warning);
    } finally {
      await s.stop();
    }
  });
});
