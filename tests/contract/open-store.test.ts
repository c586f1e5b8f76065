// --store against real libSQL servers: namespaces are created through the admin API when asked, a missing one
// without it is a clear error, and a server that ignores namespaces (all three would be one database) is refused.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { openStore, StoreError, type StoreLocation } from "../../src/db/open-store.ts";
import { type Sqld, startSqld } from "../helpers/sqld.ts";

let plain: Sqld;
let namespaced: Sqld;
beforeAll(async () => {
  [plain, namespaced] = await Promise.all([startSqld(), startSqld({ namespaces: true })]);
}, 60_000);
afterAll(async () => {
  await plain?.stop();
  await namespaced?.stop();
});

const at = (s: Sqld, opts: Partial<StoreLocation> = {}): StoreLocation => ({
  dir: "/nonexistent",
  url: s.url,
  authToken: null,
  namespace: "app",
  adminUrl: null,
  ...opts,
});

test("with the admin API the namespaces are created, kept apart, and found again", async () => {
  const store = await openStore(at(namespaced, { adminUrl: namespaced.adminUrl }));
  expect(store.remote).toBe(true);
  await store.development.execute("CREATE TABLE only_in_development (x)");
  const names = async (db: typeof store.system) =>
    (await db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")).rows.map((r) => r.name);
  expect(await names(store.development)).toContain("only_in_development");
  expect(await names(store.production)).not.toContain("only_in_development");
  expect(await names(store.system)).not.toContain("only_in_development");
  store.close();
  const again = await openStore(at(namespaced)); // exists now: no admin API needed
  expect(await names(again.development)).toContain("only_in_development");
  again.close();
});

test("a missing namespace without the admin API says how to create it", async () => {
  const e = await openStore(at(namespaced, { namespace: "missing" })).catch((err) => err);
  expect(e).toBeInstanceOf(StoreError);
  expect(e.message).toContain(`namespace "missing-system" does not exist`);
  expect(e.message).toContain("--store-admin");
});

test("a server without namespaces is refused: the three databases would be one", async () => {
  const e = await openStore(at(plain)).catch((err) => err);
  expect(e).toBeInstanceOf(StoreError);
  expect(e.message).toContain("--enable-namespaces");
});
