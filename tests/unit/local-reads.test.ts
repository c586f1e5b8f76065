// LocalReads on its own, against a real SQLite file written by another connection: a learned plan answers
// reads by key (null when missing), a moved generation or a plan of another scope answers nothing, arguments
// the main thread must judge are left to it, a statement that no longer prepares or a missing file falls back,
// and the reads of one turn share a snapshot that never outlives the turn (a later write is seen next turn).

import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { rmSync } from "node:fs";
import { LocalReads, type ReadPlan } from "../../src/code/local-reads.ts";
import { RawJson } from "../../src/code/raw-json.ts";
import { tempDir } from "../helpers/app.ts";

const dir = tempDir("burrow-local-reads-");
const file = join(dir, "development.db");
let writer: Database;
const generation = new SharedArrayBuffer(4);
const gen = new Int32Array(generation);
const SQL = "SELECT json_object('note_id', k, 'title', title) AS j FROM notes WHERE k = ?";
const plan = (over: Partial<ReadPlan> = {}): ReadPlan => ({
  scope: "development:0",
  env: "development",
  schema: "note",
  sql: SQL,
  generation: 1,
  ...over,
});

beforeAll(() => {
  writer = new Database(file, { create: true });
  writer.run("PRAGMA journal_mode=WAL");
  writer.run("CREATE TABLE notes (k TEXT PRIMARY KEY, title TEXT)");
  writer.run("INSERT INTO notes VALUES ('a', 'first'), ('b', 'second')");
  Atomics.store(gen, 0, 1);
});
afterAll(() => {
  writer.close();
  rmSync(dir, { recursive: true, force: true });
});

const text = (r: ReturnType<LocalReads["read"]>) =>
  r === null ? "main thread" : r.value instanceof RawJson ? JSON.parse(r.value.text) : r.value;

test("a learned plan answers reads by key; a missing object is null; unknown schemas and scopes are the main thread's", () => {
  const local = new LocalReads({ files: { development: file }, generation });
  expect(local.read("development:0", ["note", "a"])).toBeNull();
  local.learn(plan());
  expect(text(local.read("development:0", ["note", "a"]))).toEqual({ note_id: "a", title: "first" });
  expect(text(local.read("development:0", ["NOTE", "b", null]))).toEqual({ note_id: "b", title: "second" });
  expect(text(local.read("development:0", ["note", "zz"]))).toBeNull();
  expect(local.read("development:3", ["note", "a"])).toBeNull();
  expect(local.read("development:0", ["other", "a"])).toBeNull();
  local.close();
});

test("arguments the main thread must judge are never answered here", () => {
  const local = new LocalReads({ files: { development: file }, generation });
  local.learn(plan());
  for (const args of [
    ["note"],
    ["note", 5],
    ["note", ""],
    ["note", "a\u0000"],
    ["note", "x".repeat(257)],
    ["\u212Aote", "a"],
    ["__proto__", "a"],
    ["note", "a", { select: ["title"] }],
    ["note", "a", null, 1],
  ])
    expect(local.read("development:0", args)).toBeNull();
  local.close();
});

test("a moved generation drops the plan; a statement that no longer prepares and a missing file fall back", () => {
  const local = new LocalReads({ files: { development: file, production: join(dir, "nothing", "production.db") }, generation });
  local.learn(plan());
  expect(text(local.read("development:0", ["note", "a"]))).toEqual({ note_id: "a", title: "first" });
  Atomics.store(gen, 0, 2);
  expect(local.read("development:0", ["note", "a"])).toBeNull();
  local.learn(plan({ generation: 2 })); // relearned: the dropped plan does not come back by itself
  expect(text(local.read("development:0", ["note", "a"]))).toEqual({ note_id: "a", title: "first" });
  local.learn(plan({ schema: "gone", sql: "SELECT j FROM no_such_table WHERE k = ?", generation: 2 }));
  expect(local.read("development:0", ["gone", "a"])).toBeNull();
  local.learn(plan({ scope: "production:1", env: "production", generation: 2 }));
  expect(local.read("production:1", ["note", "a"])).toBeNull();
  Atomics.store(gen, 0, 1);
  local.close();
});

test("reads of one turn share a snapshot; a write committed after the turn is seen by the next turn's reads", async () => {
  const local = new LocalReads({ files: { development: file }, generation });
  local.learn(plan());
  expect(text(local.read("development:0", ["note", "a"]))).toEqual({ note_id: "a", title: "first" });
  // Same turn: the snapshot taken by the first read holds.
  writer.run("UPDATE notes SET title = 'changed' WHERE k = 'a'");
  expect(text(local.read("development:0", ["note", "a"]))).toEqual({ note_id: "a", title: "first" });
  // The snapshot ends with the turn's microtasks: the next read sees the write, and the writer is not held up.
  await Promise.resolve();
  expect(text(local.read("development:0", ["note", "a"]))).toEqual({ note_id: "a", title: "changed" });
  await Bun.sleep(0);
  writer.run("PRAGMA wal_checkpoint(TRUNCATE)");
  expect(writer.query("PRAGMA wal_checkpoint(TRUNCATE)").get()).toMatchObject({ busy: 0 });
  writer.run("UPDATE notes SET title = 'first' WHERE k = 'a'");
  local.close();
});
