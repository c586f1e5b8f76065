// Live streams over real sockets (the app listening on loopback as `burrow serve` does): Server-Sent Events read by
// fetch, the same events over a WebSocket on the same URL with ?after= to resume, sessions that end by a new password
// or a deleted user, and a stream that outlives a server restart (its state and the log are in the database).

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { KEYS, makeTestApp, type TestApp, tempDir } from "../helpers/app.ts";
import { EventReader, callerHeaders, createStream, subscribe } from "../helpers/live.ts";
import { listen, type Listening } from "../helpers/listen.ts";
import type { MacCredentials } from "../helpers/sign.ts";
import { rmSync } from "node:fs";

let t: TestApp;
let s: Listening;
const dir = tempDir("burrow-live-socket-");

beforeAll(async () => {
  t = await makeTestApp({ dir });
  await t.admin("PUT", "/schemas/todo", { fields: { title: { type: "string" }, n: { type: "integer" } } });
  s = listen(t);
});
afterAll(async () => {
  s.stop();
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A WebSocket's messages, parsed, as they come. */
function socket(url: string) {
  const ws = new WebSocket(url);
  const got: any[] = [];
  const waiters: (() => void)[] = [];
  ws.onmessage = (m) => {
    got.push(JSON.parse(String(m.data)));
    for (const w of waiters.splice(0)) w();
  };
  const closed = new Promise<number>((resolve) => (ws.onclose = (e) => resolve(e.code)));
  return {
    ws,
    closed,
    /** The next `n` messages that are not pings. */
    async take(n: number, timeoutMs = 3000): Promise<any[]> {
      const deadline = Date.now() + timeoutMs;
      const out: any[] = [];
      while (out.length < n) {
        const m = got.shift();
        if (m !== undefined) {
          if (m.event !== "ping") out.push(m);
          continue;
        }
        if (Date.now() > deadline) throw new Error(`got ${JSON.stringify(out)}`);
        await Promise.race([new Promise<void>((r) => waiters.push(r)), Bun.sleep(50)]);
      }
      return out;
    },
  };
}

describe("WebSocket", () => {
  test("the same URL with Upgrade: websocket carries the same events as JSON frames; ?after= resumes", async () => {
    const { stream, token } = await createStream(t);
    await subscribe(t, stream, "s", { schema: "todo", query: "n[gt]=0" });
    const url = `${s.url.replace("http", "ws")}/_live/streams/${stream}?token=${token}`;
    const one = socket(url);
    expect((await one.take(1))[0]).toEqual({ event: "ready", data: { stream } });
    await t.request("POST", "/todo", { body: { todo_id: "w1", n: 1 } });
    await t.request("PUT", "/todo/w1", { body: { n: 0 } });
    const events = await one.take(2);
    expect(events.map((e) => [e.event, e.data.object])).toEqual([
      ["create", expect.objectContaining({ todo_id: "w1", n: 1 })],
      ["leave", { todo_id: "w1" }],
    ]);
    expect(events[0].id).toBeGreaterThan(0);
    one.ws.close();
    await one.closed;
    await t.request("PUT", "/todo/w1", { body: { n: 5 } });
    const two = socket(`${url}&after=${events[1].id}`);
    const [, enter] = await two.take(2);
    expect([enter.event, enter.data.object.n]).toEqual(["enter", 5]);
    two.ws.close();
  });

  test("a wrong token is refused before the upgrade", async () => {
    const { stream } = await createStream(t);
    const res = await fetch(`${s.url}/_live/streams/${stream}?token=nope`, { headers: { upgrade: "websocket", connection: "upgrade" } });
    expect(res.status).toBe(401);
  });
});

describe("Server-Sent Events over a socket", () => {
  async function user(name: string): Promise<MacCredentials> {
    await t.request("POST", "/user", { body: { username: name, password: `${name}-password-1` } });
    return (await t.request("POST", "/user/accessToken", { body: { username: name, password: `${name}-password-1` } })).body;
  }
  const open = async (stream: string, token: string, headers: Record<string, string> = {}) => {
    const r = new EventReader(await fetch(`${s.url}/_live/streams/${stream}?token=${token}`, { headers }));
    expect((await r.next())!.event).toBe("ready");
    return r;
  };

  test("a new password and a deleted user end the user's streams", async () => {
    for (const [name, end] of [
      [
        "pia",
        (c: MacCredentials) =>
          t.request("POST", "/user/resetPassword", {
            body: { old: { password: "pia-password-1" }, new: { password: "pia-password-2" } },
            headers: callerHeaders(c, "POST", "/user/resetPassword"),
          }),
      ],
      ["quinn", () => t.admin("DELETE", "/data/development/user/quinn")],
    ] as const) {
      const creds = await user(name);
      const { stream, token } = await createStream(t, creds);
      const r = await open(stream, token);
      // Another session of the same user: a new password ends every other session, so it ends the stream too.
      const other: MacCredentials =
        name === "pia"
          ? (await t.request("POST", "/user/accessToken", { body: { username: name, password: `${name}-password-1` } })).body
          : creds;
      expect((await end(other)).status).toBe(200);
      const [ev] = await r.take(1);
      expect([name, ev!.event]).toEqual([name, "end"]);
      expect(await r.next()).toBeNull();
    }
  });

  test("a stream outlives a restart: reconnecting with Last-Event-ID replays from the database", async () => {
    const { stream, token } = await createStream(t);
    await subscribe(t, stream, "s", { schema: "todo", query: "title=restart" });
    const r = await open(stream, token);
    await t.request("POST", "/todo", { body: { todo_id: "x1", title: "restart" } });
    const [seen] = await r.take(1);
    await r.close();
    s.stop();
    await t.close();
    t = await makeTestApp({ dir });
    s = listen(t);
    await t.request("POST", "/todo", { body: { todo_id: "x2", title: "restart" } });
    const again = await open(stream, token, { "last-event-id": String(seen!.id) });
    expect((await again.take(1)).map((e) => e.data.object.todo_id)).toEqual(["x2"]);
    await again.close();
  });

  test("the public key is not needed to connect, but a stream of one environment is not the other's", async () => {
    const { stream, token } = await createStream(t);
    const r = await open(stream, token);
    await r.close();
    const prodPut = await fetch(`${s.url}/_live/streams/${stream}/subscriptions/s`, {
      method: "PUT",
      headers: {
        "x-service-api-key": KEYS.prodPublic,
        accept: "application/vnd.service+json; version=0",
        "content-type": "application/json",
      },
      body: JSON.stringify({ schema: "todo" }),
    });
    expect(prodPut.status).toBe(401);
  });
});
