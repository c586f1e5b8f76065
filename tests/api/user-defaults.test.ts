// The built-in user schema is safe by default: sign-up and reading are open, only the user itself updates or
// deletes its account (answers of docs/api/permissions.md#denials for others), the password stays write-only; a data
// directory keeps what its admin set; deploys warn about production schemas anyone may change or delete.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { KEYS, makeTestApp, tempDir, type TestApp } from "../helpers/app.ts";
import { macAuth, oauthAuth } from "../helpers/sign.ts";

let t: TestApp;
const creds: Record<string, { access_token: string; mac_key: string }> = {};
const as = (who: string, method: string, path: string, body?: unknown) =>
  t.request(method, path, { body, headers: { authorization: macAuth(creds[who]!, method, path) } });

beforeAll(async () => {
  t = await makeTestApp();
  for (const u of ["ann", "bob"]) {
    expect((await t.request("POST", "/user", { body: { username: u, password: `${u}-password`, email: `${u}@example.com` } })).status).toBe(
      201,
    );
    creds[u] = (await t.request("POST", "/user/accessToken", { body: { username: u, password: `${u}-password` } })).body;
  }
});
afterAll(() => t.close());

describe("the default user schema", () => {
  test("its permissions: create and read open, update and delete by the user itself", async () => {
    expect((await t.admin("GET", "/schemas/user")).body.permissions).toEqual({
      create: "open",
      read: "open",
      update: "owner",
      delete: "owner",
    });
  });

  test("anyone signs up and reads users; the password is never returned", async () => {
    const list = await t.request("GET", "/user");
    expect(list.status).toBe(200);
    expect(list.body.map((u: { username: string }) => u.username).sort()).toEqual(["ann", "bob"]);
    expect(list.text).not.toContain("password");
  });

  test("anonymous callers cannot update or delete a user (401)", async () => {
    const put = await t.request("PUT", "/user/bob", { body: { email: "evil@example.com" } });
    expect([put.status, put.body.error]).toEqual([401, "Insufficient authorization"]);
    const del = await t.request("DELETE", "/user/bob");
    expect([del.status, del.body.error]).toEqual([401, "Insufficient authorization"]);
  });

  test("another user cannot either, and learns nothing (404 as for an owner mismatch)", async () => {
    const put = await as("ann", "PUT", "/user/bob", { email: "evil@example.com" });
    expect([put.status, put.body.error]).toEqual([404, "object instance does not exist"]);
    const del = await as("ann", "DELETE", "/user/bob");
    expect([del.status, del.body.error]).toEqual([404, "This object does not exist"]);
    expect((await as("bob", "GET", "/user/bob")).body.email).toBe("bob@example.com");
  });

  test("the user updates itself; the app (private key) may update anyone; the user deletes itself", async () => {
    const put = await as("bob", "PUT", "/user/bob", { email: "bob@new.example.com" });
    expect([put.status, put.body.email]).toEqual([200, "bob@new.example.com"]);
    const app = await t.request("PUT", "/user/ann", {
      body: { email: "ann@app.example.com" },
      key: null,
      headers: { authorization: oauthAuth(KEYS.devPublic, KEYS.devPrivate, "PUT", "http://localhost/user/ann") },
    });
    expect([app.status, app.body.email]).toEqual([200, "ann@app.example.com"]);
    expect((await as("bob", "DELETE", "/user/bob")).status).toBe(200);
    expect((await t.request("GET", "/user/bob")).status).toBe(404);
  });
});

describe("existing data directories and deploys", () => {
  test("a directory keeps the permissions its admin set; deploy answers and logs one warning per open schema", async () => {
    const dir = tempDir();
    try {
      const a = await makeTestApp({ dir });
      const user = (await a.admin("GET", "/schemas/user")).body;
      const open = { create: "open", read: "open", update: "open", delete: "open" };
      expect((await a.admin("PUT", "/schemas/user", { ...user, permissions: open })).status).toBe(200);
      expect(
        (await a.admin("PUT", "/schemas/note", { fields: { text: { type: "string" } }, permissions: { ...open, update: "owner" } })).status,
      ).toBe(201);
      await a.close();
      const b = await makeTestApp({ dir });
      try {
        expect((await b.admin("GET", "/schemas/user")).body.permissions).toEqual(open);
        expect((await b.request("PUT", "/user/nobody", { body: { email: "x@example.com" } })).status).toBe(404); // open: no 401
        const d = await b.admin("POST", "/deploy", {});
        expect(d.status).toBe(200);
        expect([...d.body.warnings].sort()).toEqual([
          'production schema "note" lets anyone with the public key delete its objects (delete: open); consider "owner" or stricter',
          'production schema "user" lets anyone with the public key change and delete its objects (update: open, delete: open); consider "owner" or stricter',
        ]);
        for (const w of d.body.warnings) expect(b.logs.some((l) => l.includes(" WARN ") && l.endsWith(w))).toBe(true);
      } finally {
        await b.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a fresh directory deploys without warnings", async () => {
    const d = await t.admin("POST", "/deploy", {});
    expect([d.status, d.body.warnings]).toEqual([200, []]);
  });
});
