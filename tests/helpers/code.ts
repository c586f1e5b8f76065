// Uploading custom code in tests: PUT /_admin/api/code with the raw source and an admin token per test app.

import { ADMIN, type TestApp } from "./app.ts";

const tokens = new WeakMap<TestApp, string>();

export async function upload(app: TestApp, source: string, query = "", contentType = "application/javascript") {
  let token = tokens.get(app);
  if (!token) {
    token = (await app.request("POST", "/_admin/api/login", { body: ADMIN, key: null, version: null })).body.token as string;
    tokens.set(app, token);
  }
  return app.request("PUT", `/_admin/api/code${query}`, {
    raw: source,
    key: null,
    version: null,
    headers: { authorization: `Bearer ${token}`, "content-type": contentType },
  });
}
