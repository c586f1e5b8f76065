// The CLI's database commands on a libSQL server (--store): keys, admin create, schema apply/export, code deploy,
// deploy, export and import, each run as its own process from a data directory of its own, and their effect seen
// by a `burrow serve` node on the same namespaces (another data directory). Also: an unreachable store and a
// server without namespaces are one line and a non-zero exit.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../helpers/app.ts";
import { ROOT, runCli, startServerProcess, type ServerProcess } from "../helpers/spawn.ts";
import { type Sqld, startSqld } from "../helpers/sqld.ts";

const SOURCE = [process.execPath, join(ROOT, "src/main.ts")];
const dir = tempDir("burrow-cli-store-");
let sqld: Sqld;
let server: ServerProcess | null = null;

const storeEnv = (namespace: string) => ({
  BURROW_STORE: sqld.url,
  BURROW_STORE_ADMIN_URL: sqld.adminUrl!,
  BURROW_STORE_NAMESPACE: namespace,
});

/** The CLI on its own data directory, the databases on sqld under `namespace`; fails with the output on another exit code. */
async function cli(args: string[], namespace = "clitest", code = 0) {
  const r = await runCli([...args, "--dir", join(dir, `cli-${namespace}`)], storeEnv(namespace));
  if (r.code !== code) throw new Error(`burrow ${args.join(" ")}: exit ${r.code}\n${r.stdout}\n${r.stderr}`);
  return r;
}

beforeAll(async () => {
  sqld = await startSqld({ namespaces: true });
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await sqld?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test("keys, admin create, schema apply, code deploy and deploy from the CLI are what a node on the store serves", async () => {
  const keys = JSON.parse((await cli(["keys", "--json"])).stdout) as Record<
    "development" | "production",
    { publicKey: string; privateKey: string }
  >;
  expect(JSON.parse((await cli(["keys", "--json"])).stdout)).toEqual(keys);
  expect((await cli(["admin", "create", "--email", "ops@example.com", "--password", "remote-store-password"])).stdout.trim()).toBe(
    "admin ops@example.com created (owner)",
  );

  const defs = join(dir, "defs");
  mkdirSync(defs, { recursive: true });
  writeFileSync(
    join(defs, "note.json"),
    JSON.stringify({ name: "note", fields: { title: { type: "string" }, n: { type: "integer" } }, indexes: [["n"]] }),
  );
  expect((await cli(["schema", "apply", defs])).stdout).toContain("+ create schema note");
  expect((await cli(["schema", "apply", defs])).stdout).toContain("applied: 0 schema(s) changed");
  const code = join(dir, "code.js");
  writeFileSync(
    code,
    `export const methods = [{ name: "twice", params: ["n"], execute(r) { return { body: { twice: Number(r.params.n) * 2 } }; } }];`,
  );
  expect((await cli(["code", "deploy", code])).stdout).toContain("/twice");
  expect((await cli(["deploy"])).stdout).toContain("deployed development as production version 1");
  const v1 = JSON.parse((await cli(["schema", "export", "--version", "1"])).stdout) as { name: string }[];
  expect(v1.map((s) => s.name).sort()).toEqual(["aclrole", "note", "user"]);

  // A node on the same namespaces, from a data directory of its own, serves all of it.
  server = await startServerProcess(SOURCE, { BURROW_DIR: join(dir, "node"), ...storeEnv("clitest") });
  expect(server.banner).toContain(keys.development.publicKey);
  const dev = {
    accept: "application/vnd.service+json; version=0",
    "x-service-api-key": keys.development.publicKey,
    "content-type": "application/json",
  };
  const created = await fetch(`${server.url}/note`, { method: "POST", headers: dev, body: JSON.stringify({ title: "on sqld", n: 3 }) });
  expect(created.status).toBe(201);
  expect(await (await fetch(`${server.url}/twice?n=21`, { headers: dev })).json()).toEqual({ twice: 42 });
  const prod = { accept: "application/vnd.service+json; version=1", "x-service-api-key": keys.production.publicKey };
  expect(await (await fetch(`${server.url}/twice?n=5`, { headers: prod })).json()).toEqual({ twice: 10 });
  const login = await fetch(`${server.url}/_admin/api/login`, {
    method: "POST",
    body: JSON.stringify({ email: "ops@example.com", password: "remote-store-password" }),
  });
  expect(login.status).toBe(200);
  await server.stop();
  server = null;
}, 120_000);

test("export from one namespace set and import into another give the same objects", async () => {
  const defs = join(dir, "defs-transfer");
  mkdirSync(defs, { recursive: true });
  writeFileSync(
    join(defs, "place.json"),
    JSON.stringify({ name: "place", fields: { name: { type: "string" }, score: { type: "float" }, at: { type: "geopoint" } } }),
  );
  await cli(["schema", "apply", defs], "source");
  const rows = Array.from({ length: 300 }, (_, i) => ({ name: `place ${i}`, score: i / 3, at: { lat: 40 + i / 100, lon: -3 + i / 100 } }));
  const input = join(dir, "places.jsonl");
  writeFileSync(input, `${rows.map((r) => JSON.stringify(r)).join("\n")}\n`);
  await cli(["import", input, "--schema", "place", "--format", "jsonl"], "source");
  const first = join(dir, "export-1");
  await cli(["export", "--out", first], "source");
  await cli(["import", first], "target");
  const second = join(dir, "export-2");
  await cli(["export", "--out", second], "target");
  const read = (d: string) =>
    readFileSync(join(d, "place.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  const a = read(first);
  expect(a).toHaveLength(300);
  expect(read(second)).toEqual(a);
  // Floats came back exactly through sqld.
  expect(a.map((o) => o.score).sort((x, y) => (x as number) - (y as number))).toEqual(rows.map((r) => r.score));
}, 120_000);

test("an unreachable store, and a libSQL server without namespaces, are one line on stderr and a non-zero exit", async () => {
  const down = await runCli(["keys", "--dir", join(dir, "down")], { BURROW_STORE: "http://127.0.0.1:9" });
  expect(down.code).not.toBe(0);
  expect(down.stderr.trim().split("\n")).toHaveLength(1);
  expect(down.stderr).toStartWith("burrow: ");
  const plain = await startSqld();
  try {
    const r = await runCli(["keys", "--dir", join(dir, "plain")], { BURROW_STORE: plain.url });
    expect(r.code).not.toBe(0);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain("--enable-namespaces");
  } finally {
    await plain.stop();
  }
}, 60_000);

test("backup from the store, restore onto other namespaces (refused over data without --force), into a data directory, and an embedded backup onto the store", async () => {
  // Parsed: sqld writes a float's 17 digits (42.149999999999999) where the embedded SQLite writes 42.15, the same number.
  const places = (d: string) =>
    readFileSync(join(d, "place.jsonl"), "utf8")
      .trim()
      .split("\n")
      .sort()
      .map((l) => JSON.parse(l) as unknown);
  const expected = places(join(dir, "export-1"));
  const file = join(dir, "store-backup.tar");
  const b = await cli(["backup", "--out", file], "source");
  expect(b.stdout.trim()).toBe(file);

  const r = await cli(["restore", file], "copy");
  expect(r.stdout).toContain(`onto ${sqld.url} (copy-system, copy-development, copy-production)`);
  const again = await cli(["restore", file], "copy", 1);
  expect(again.stderr.trim().split("\n").at(-1)).toContain(`namespace "copy-system" on ${sqld.url} holds data; pass --force`);
  await cli(["restore", file, "--force"], "copy");
  // Flags of the other kind of restore are refused, not ignored (exit 2: a usage error).
  expect((await cli(["restore", file, "--keep-old"], "copy", 2)).stderr).toContain("--keep-old keeps a data directory aside");
  const forced = await runCli(["restore", file, "--force", "--dir", join(dir, "never")]);
  expect([forced.code, forced.stderr]).toEqual([2, expect.stringContaining("--force replaces namespaces on a libSQL server")]);
  await cli(["export", "--out", join(dir, "export-copy")], "copy");
  expect(places(join(dir, "export-copy"))).toEqual(expected);

  // The same file restores into a data directory; a backup of that directory restores onto the store.
  const local = join(dir, "local-data");
  expect((await runCli(["restore", file, "--dir", local])).code).toBe(0);
  const exported = await runCli(["export", "--out", join(dir, "export-local"), "--dir", local]);
  expect(exported.code).toBe(0);
  expect(places(join(dir, "export-local"))).toEqual(expected);
  const embedded = join(dir, "embedded-backup.tar");
  expect((await runCli(["backup", "--out", embedded, "--dir", local])).code).toBe(0);
  await cli(["restore", embedded], "copy2");
  await cli(["export", "--out", join(dir, "export-copy2")], "copy2");
  expect(places(join(dir, "export-copy2"))).toEqual(expected);
}, 120_000);
