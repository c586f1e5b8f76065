// `--push-http ADDR` (docs/api/push.md#second-listener): a second listener serving the push API at its root. Registrations and
// signed sends work there with signatures over the path the client used, the main listener sees the same
// tokens under /_push, nothing but the push API is served there, and a busy address fails in one line.

import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../helpers/app.ts";
import { oauthAuth } from "../helpers/sign.ts";
import { ROOT, runCli, startServerProcess } from "../helpers/spawn.ts";

const SOURCE = [process.execPath, join(ROOT, "src/main.ts")];
const dir = tempDir("burrow-push-http-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const KEYS = { BURROW_DEV_PUBLIC_KEY: "push-http-dev-public", BURROW_DEV_PRIVATE_KEY: "push-http-dev-private" };
const dev = { accept: "application/vnd.service+json; version=0", "x-service-api-key": KEYS.BURROW_DEV_PUBLIC_KEY };
const TOKEN = "ab".repeat(32);

test("the push API at the root of --push-http, and under /_push on the main listener", async () => {
  const server = await startServerProcess(SOURCE, { BURROW_DIR: join(dir, "data"), BURROW_PUSH_HTTP: "127.0.0.1:0", ...KEYS });
  try {
    const push = /push API\s+(http:\/\/[^\s/]+)\//.exec(server.banner)?.[1];
    expect(push).toBeDefined();
    expect(push).not.toBe(server.url);

    const reg = await fetch(`${push}/tokens/ios/${TOKEN}`, {
      method: "POST",
      headers: { ...dev, "content-type": "application/json" },
      body: JSON.stringify({ user: "ann" }),
    });
    expect(reg.status).toBe(200);
    // A request signed for the second listener's own URL (its path has no /_push) is accepted.
    const url = `${push}/tokens?user=ann`;
    const listed = await fetch(url, {
      headers: { accept: dev.accept, authorization: oauthAuth(KEYS.BURROW_DEV_PUBLIC_KEY, KEYS.BURROW_DEV_PRIVATE_KEY, "GET", url) },
    });
    expect(listed.status).toBe(200);
    expect(JSON.stringify(await listed.json())).toContain(TOKEN);
    // The /_push form works there too, and the main listener sees the same token.
    const mainUrl = `${server.url}/_push/tokens?user=ann`;
    const onMain = await fetch(mainUrl, {
      headers: { accept: dev.accept, authorization: oauthAuth(KEYS.BURROW_DEV_PUBLIC_KEY, KEYS.BURROW_DEV_PRIVATE_KEY, "GET", mainUrl) },
    });
    expect(JSON.stringify(await onMain.json())).toContain(TOKEN);
    // A signature made for the main listener's path does not pass on the push listener's path.
    const wrong = await fetch(`${push}/tokens?user=ann`, {
      headers: {
        accept: dev.accept,
        authorization: oauthAuth(KEYS.BURROW_DEV_PUBLIC_KEY, KEYS.BURROW_DEV_PRIVATE_KEY, "GET", `${push}/_push/tokens?user=ann`),
      },
    });
    expect(wrong.status).toBe(401);
    // Sending, signed for the push listener.
    const sendUrl = `${push}/notifications`;
    const sent = await fetch(sendUrl, {
      method: "POST",
      headers: {
        accept: dev.accept,
        "content-type": "application/json",
        authorization: oauthAuth(KEYS.BURROW_DEV_PUBLIC_KEY, KEYS.BURROW_DEV_PRIVATE_KEY, "POST", sendUrl),
      },
      body: JSON.stringify({ users: ["ann"], payload: { message: "hi" } }),
    });
    expect(sent.status).toBe(200);
    expect(await sent.json()).toEqual({ queued: 1 });
    // Only the push API lives there: the datastore, the admin API and health are the main listener's.
    for (const path of ["/users", "/_admin/api/keys", "/_health", "/"]) {
      const r = await fetch(`${push}${path}`, { headers: dev });
      expect(r.status).toBe(404);
      expect(((await r.json()) as { error: unknown }).error).toBeString();
    }
  } finally {
    expect(await server.stop()).toBe(0);
  }
});

test("a busy --push-http address is one line and exit code 2", async () => {
  const busy = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("taken") });
  try {
    const r = await runCli(["serve", "--http", "127.0.0.1:0", "--push-http", `127.0.0.1:${busy.port}`], { BURROW_DIR: join(dir, "busy") });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain(
      `cannot listen on 127.0.0.1:${busy.port}: the address is in use (another server there? choose another with --push-http host:port)`,
    );
    const bad = await runCli(["serve", "--push-http", "nowhere"], { BURROW_DIR: join(dir, "busy") });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('invalid --push-http "nowhere"');
  } finally {
    busy.stop(true);
  }
});
