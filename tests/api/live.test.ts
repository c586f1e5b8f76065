// Live data end to end through the app (docs/api/live.md): streams and subscriptions, the five events with the
// object as the subscriber may read it, every read permission, replay after a reconnect (Last-Event-ID, ?after=,
// the state of the stream at each id, a gap the log no longer holds), a restart, sessions that end, channels from
// custom code, and the refusals.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeTestApp, type TestApp } from "../helpers/app.ts";
import { upload } from "../helpers/code.ts";
import { type Caller, callerHeaders, connect, createStream, subscribe } from "../helpers/live.ts";
import type { MacCredentials } from "../helpers/sign.ts";

let t: TestApp;
const users: Record<string, MacCredentials> = {};

async function write(method: string, path: string, body?: unknown, who: Caller = "anonymous") {
  const r = await t.request(method, path, { body, headers: callerHeaders(who, method, path) });
  expect([method, path, r.status < 300, r.text.slice(0, 200)]).toEqual([method, path, true, r.text.slice(0, 200)]);
  return r;
}

const PUBLISH = `
export const methods = [
  { name: "say", async execute(r, s) { const { channel, data } = JSON.parse(r.body); await s.live.publish(channel, data); return { body: {} }; } },
];`;

beforeAll(async () => {
  t = await makeTestApp();
  const fields = {
    title: { type: "string" },
    done: { type: "boolean" },
    priority: { type: "integer" },
    note: { type: "string", visibility: "owner" },
  };
  const open = { create: "open", update: "open", delete: "open" };
  await t.admin("PUT", "/schemas/user", {
    fields: {
      email: { type: "string", visibility: "owner" },
      password: { type: "password" },
      friends: { type: "relationship", schema: "user", many: true },
    },
    permissions: { create: "open", read: "open", update: "owner", delete: "owner" },
    user: { key: "username", password: "password", email: "email" },
  });
  await t.admin("PUT", "/schemas/todo", { fields, permissions: { ...open, read: "open" } });
  await t.admin("PUT", "/schemas/mine", { fields, permissions: { ...open, read: "owner" } });
  await t.admin("PUT", "/schemas/logged", { fields, permissions: { ...open, read: "logged_in" } });
  await t.admin("PUT", "/schemas/team", { fields, permissions: { ...open, read: { role: "staff" } } });
  await t.admin("PUT", "/schemas/shared", {
    fields: { ...fields, readers: { type: "relationship", schema: "user", many: true } },
    permissions: { ...open, read: { relationship: "readers" } },
  });
  await t.admin("PUT", "/schemas/friendly", { fields, permissions: { ...open, read: { ownerRelationship: "friends" } } });
  await t.admin("PUT", "/schemas/keyonly", { fields, permissions: { ...open, read: "private_key" } });
  await t.admin("PUT", "/schemas/closed", { fields, permissions: { ...open, read: "none" } });
  for (const u of ["ann", "bob", "cat"]) {
    await write("POST", "/user", { username: u, password: `${u}-password-1` });
    users[u] = (await t.request("POST", "/user/accessToken", { body: { username: u, password: `${u}-password-1` } })).body;
  }
  await upload(t, PUBLISH);
});
afterAll(() => t.close());

describe("the protocol", () => {
  test("a stream gets create, update, enter, leave and delete for its filter, with the object as it may read it", async () => {
    const { stream, token } = await createStream(t);
    expect((await subscribe(t, stream, "open", { schema: "todo", query: "done=false", select: "title,done" })).status).toBe(200);
    const r = await connect(t, stream, token);
    await write("POST", "/todo", { todo_id: "a", title: "A", done: false, note: "private" });
    await write("PUT", "/todo/a", { title: "A2" });
    await write("PUT", "/todo/a", { done: true });
    await write("PUT", "/todo/a", { priority: 3 }); // matches neither before nor after: nothing
    await write("PUT", "/todo/a", { done: false });
    await write("DELETE", "/todo/a");
    await write("POST", "/todo", { todo_id: "b", done: true }); // never matches
    const events = await r.take(5);
    expect(events.map((e) => [e.event, e.data.subscription, e.data.schema, e.data.object])).toEqual([
      ["create", "open", "todo", { todo_id: "a", title: "A", done: false }],
      ["update", "open", "todo", { todo_id: "a", title: "A2", done: false }],
      ["leave", "open", "todo", { todo_id: "a" }],
      ["enter", "open", "todo", { todo_id: "a", title: "A2", done: false }],
      ["delete", "open", "todo", { todo_id: "a", title: "A2", done: false }],
    ]);
    const ids = events.map((e) => e.id!);
    expect([...ids].sort((x, y) => x - y)).toEqual(ids);
    expect(await r.quiet()).toEqual([]);
    await r.close();
  });

  test("events lists what a subscription wants; NULL fields are left out; a DELETE of the subscription stops it", async () => {
    const { stream, token } = await createStream(t);
    await subscribe(t, stream, "gone", { schema: "todo", events: ["delete"] });
    await subscribe(t, stream, "all", { schema: "todo", query: "title=x" });
    const r = await connect(t, stream, token);
    await write("POST", "/todo", { todo_id: "c", title: "x" });
    await write("DELETE", "/todo/c");
    const events = await r.take(3);
    expect(events.map((e) => [e.event, e.data.subscription])).toEqual(
      [
        ["create", "all"],
        ["delete", "gone"],
        ["delete", "all"],
      ].sort((a, b) => (a[0] === b[0] ? 0 : a[0] === "create" ? -1 : 1)),
    );
    expect(events[0]!.data.object).toEqual({ todo_id: "c", title: "x", createddate: expect.any(Number), lastmoddate: expect.any(Number) });
    expect((await t.request("DELETE", `/_live/streams/${stream}/subscriptions/all`)).status).toBe(200);
    await write("POST", "/todo", { todo_id: "d", title: "x" });
    expect(await r.quiet()).toEqual([]);
    await r.close();
  });
});

describe("permissions", () => {
  /** Who receives a create in `schema` made by `owner` with `body`. */
  async function receivers(schema: string, body: Record<string, unknown>, owner: Caller = "anonymous"): Promise<string[]> {
    const callers: [string, Caller][] = [
      ["anonymous", "anonymous"],
      ["app", "app"],
      ["ann", users.ann!],
      ["bob", users.bob!],
      ["cat", users.cat!],
    ];
    const readers: [string, Awaited<ReturnType<typeof connect>>][] = [];
    for (const [name, who] of callers) {
      const { stream, token } = await createStream(t, who);
      const sub = await subscribe(t, stream, "s", { schema }, who);
      if (sub.status !== 200) continue;
      readers.push([name, await connect(t, stream, token)]);
    }
    await write("POST", `/${schema}`, body, owner);
    // Quiet for 600 ms: on a busy machine (and on a libSQL store, tailed every 100 ms) an event may take a while.
    const heard = await Promise.all(readers.map(([, r]) => r.quiet(600)));
    await Promise.all(readers.map(([, r]) => r.close()));
    return readers.filter((_, i) => heard[i]!.some((e) => e.event === "create")).map(([name]) => name);
  }

  test("open, logged_in, owner, private_key: the same readers as GET", async () => {
    expect(await receivers("todo", { title: "t" })).toEqual(["anonymous", "app", "ann", "bob", "cat"]);
    expect(await receivers("logged", { title: "t" })).toEqual(["app", "ann", "bob", "cat"]);
    expect(await receivers("mine", { title: "t" }, users.ann!)).toEqual(["app", "ann"]);
    expect(await receivers("keyonly", { title: "t" })).toEqual(["app"]);
  });

  test("a subscription the caller could not read with GET is refused with GET's status", async () => {
    const { stream } = await createStream(t);
    expect((await subscribe(t, stream, "s", { schema: "keyonly" })).status).toBe(401);
    expect((await subscribe(t, stream, "s", { schema: "closed" })).status).toBe(405);
  });

  test("roles, relationships and the owner's relationships decide per object", async () => {
    await write("POST", "/aclrole", { aclrole_id: "staff", users: ["bob"] }, "app");
    expect(await receivers("team", { title: "t" })).toEqual(["app", "bob"]);
    expect(await receivers("shared", { title: "t", readers: ["cat"] })).toEqual(["app", "cat"]);
    await write("PUT", "/user/ann", { friends: ["bob"] }, users.ann!);
    expect(await receivers("friendly", { title: "t" }, users.ann!)).toEqual(["app", "bob"]);
    // A change of role members applies to the next write.
    await write("PUT", "/aclrole/staff", { users: ["cat"] }, "app");
    expect(await receivers("team", { title: "t" })).toEqual(["app", "cat"]);
  });

  test("owner-only fields reach the owner only, and filtering on them is refused to others", async () => {
    const { stream: s1, token: t1 } = await createStream(t, users.ann!);
    await subscribe(t, s1, "s", { schema: "todo" }, users.ann!);
    const { stream: s2, token: t2 } = await createStream(t, users.bob!);
    await subscribe(t, s2, "s", { schema: "todo" }, users.bob!);
    const [ann, bob] = [await connect(t, s1, t1), await connect(t, s2, t2)];
    await write("POST", "/todo", { todo_id: "secret", note: "for ann" }, users.ann!);
    expect((await ann.take(1))[0]!.data.object.note).toBe("for ann");
    expect((await bob.take(1))[0]!.data.object).not.toHaveProperty("note");
    const refused = await subscribe(t, s2, "f", { schema: "todo", query: "note=x" }, users.bob!);
    expect([refused.status, refused.body.error]).toEqual([400, expect.stringContaining('"note"')]);
    await ann.close();
    await bob.close();
  });

  test("an update that changes who may read an object is an enter or a leave", async () => {
    const { stream, token } = await createStream(t, users.cat!);
    await subscribe(t, stream, "s", { schema: "shared" }, users.cat!);
    const r = await connect(t, stream, token);
    await write("POST", "/shared", { shared_id: "sh1", title: "t" });
    await write("PUT", "/shared/sh1", { readers: ["cat"] });
    await write("PUT", "/shared/sh1", { readers: ["bob"] });
    expect((await r.take(2)).map((e) => e.event)).toEqual(["enter", "leave"]);
    await r.close();
  });
});

describe("nothing missed", () => {
  test("a reconnect with Last-Event-ID (or ?after=) replays what happened meanwhile, in order, once", async () => {
    const { stream, token } = await createStream(t);
    await subscribe(t, stream, "s", { schema: "todo", query: "title=replay" });
    const r1 = await connect(t, stream, token);
    await write("POST", "/todo", { todo_id: "r1", title: "replay" });
    const [first] = await r1.take(1);
    await r1.close();
    for (let i = 2; i <= 5; i++) await write("POST", "/todo", { todo_id: `r${i}`, title: "replay" });
    const r2 = await connect(t, stream, token, { lastEventId: first!.id! });
    const missed = await r2.take(4);
    expect(missed.map((e) => e.data.object.todo_id)).toEqual(["r2", "r3", "r4", "r5"]);
    await write("POST", "/todo", { todo_id: "r6", title: "replay" });
    expect((await r2.take(1))[0]!.data.object.todo_id).toBe("r6");
    await r2.close();
    const r3 = await connect(t, stream, token, { after: missed[1]!.id! });
    expect((await r3.take(3)).map((e) => e.data.object.todo_id)).toEqual(["r4", "r5", "r6"]);
    expect(await r3.quiet()).toEqual([]);
    await r3.close();
  });

  test("a replay uses the subscriptions the stream had at each change", async () => {
    const { stream, token } = await createStream(t);
    const r = await connect(t, stream, token);
    await r.quiet(150); // the position it is current to comes as an id-only message
    const start = r.lastId!;
    await r.close();
    await write("POST", "/todo", { todo_id: "s1", title: "state" }); // before the subscription: not for this stream
    await subscribe(t, stream, "s", { schema: "todo", query: "title=state" });
    await write("POST", "/todo", { todo_id: "s2", title: "state" });
    await t.request("DELETE", `/_live/streams/${stream}/subscriptions/s`);
    await write("POST", "/todo", { todo_id: "s3", title: "state" }); // after it went: not either
    const again = await connect(t, stream, token, { lastEventId: start });
    expect((await again.take(1)).map((e) => e.data.object.todo_id)).toEqual(["s2"]);
    expect(await again.quiet()).toEqual([]);
    await again.close();
  });

  test("a gap the log no longer holds is a reset", async () => {
    const { stream, token } = await createStream(t);
    await subscribe(t, stream, "s", { schema: "todo" });
    const r = await connect(t, stream, token);
    await r.quiet(150);
    const from = r.lastId!;
    await r.close();
    await write("POST", "/todo", { todo_id: "g1" });
    await write("POST", "/todo", { todo_id: "g2" });
    await t.burrow.envDbs.development.execute({ sql: "DELETE FROM _burrow_changes WHERE id <= ?", args: [from + 1] });
    const again = await connect(t, stream, token, { lastEventId: from });
    const [reset] = await again.take(1);
    expect(reset!.event).toBe("reset");
    // After a reset the stream is live: what happens from there on arrives (g2 too, if the hub had not read it yet).
    await write("POST", "/todo", { todo_id: "g3" });
    const after: string[] = [];
    while (!after.includes("g3")) after.push((await again.take(1))[0]!.data.object.todo_id);
    expect(after.filter((k) => k !== "g2")).toEqual(["g3"]);
    await again.close();
  });
});

describe("sessions and channels", () => {
  test("a logout ends the user's streams with event end, and the stream is gone", async () => {
    await write("POST", "/user", { username: "dan", password: "dan-password-1" });
    const dan: MacCredentials = (await t.request("POST", "/user/accessToken", { body: { username: "dan", password: "dan-password-1" } }))
      .body;
    const { stream, token } = await createStream(t, dan);
    await subscribe(t, stream, "s", { schema: "todo" }, dan);
    const r = await connect(t, stream, token);
    const out = await t.request("GET", "/user/logout", { headers: callerHeaders(dan, "GET", "/user/logout") });
    expect(out.status).toBe(200);
    const [end] = await r.take(1);
    expect(end!.event).toBe("end");
    expect(await r.next()).toBeNull();
    const again = await t.app.handle(new Request(`http://localhost/_live/streams/${stream}?token=${token}`));
    expect(again.status).toBe(401);
  });

  test("an expired session ends its streams when the sweep removes it", async () => {
    await write("POST", "/user", { username: "eve", password: "eve-password-1" });
    const eve: MacCredentials = (await t.request("POST", "/user/accessToken", { body: { username: "eve", password: "eve-password-1" } }))
      .body;
    const { stream, token } = await createStream(t, eve);
    const r = await connect(t, stream, token);
    await t.burrow.envDbs.development.execute({
      sql: "UPDATE _burrow_sessions SET refresh_expires = 1 WHERE family = ?",
      args: [eve.access_token.slice(0, 16)],
    });
    await t.burrow.sessions.development.sweep();
    expect((await r.take(1))[0]!.event).toBe("end");
    expect(await r.next()).toBeNull();
  });

  test("custom code publishes to user:<name> and to public channels the stream joined", async () => {
    const { stream, token } = await createStream(t, users.ann!);
    const join = `/_live/streams/${stream}/channels/public:lobby`;
    expect((await t.request("PUT", join, { headers: callerHeaders(users.ann!, "PUT", join) })).status).toBe(200);
    const r = await connect(t, stream, token);
    await write("POST", "/say", { channel: "user:ann", data: { hi: 1 } });
    await write("POST", "/say", { channel: "user:bob", data: { hi: 2 } });
    await write("POST", "/say", { channel: "public:lobby", data: "typing" });
    await write("POST", "/say", { channel: "public:other", data: "no" });
    expect((await r.take(2)).map((e) => [e.id, e.event, e.data])).toEqual([
      [null, "message", { channel: "user:ann", data: { hi: 1 } }],
      [null, "message", { channel: "public:lobby", data: "typing" }],
    ]);
    expect(await r.quiet()).toEqual([]);
    await r.close();
  });
});

describe("refusals", () => {
  test("bad subscriptions are 400 with the field named; another caller or environment is 401", async () => {
    const { stream } = await createStream(t);
    const cases: [unknown, string][] = [
      [{ schema: "nope" }, 'unknown schema "nope"'],
      [{ schema: "todo", query: "nope=1" }, '"nope"'],
      [{ schema: "todo", query: "priority[gt]=x" }, "priority"],
      [{ schema: "todo", query: "[or1].a=1&[or2].b=2" }, "one OR block"],
      [{ schema: "todo", select: "title,nope" }, '"nope"'],
      [{ schema: "todo", events: ["explode"] }, "events"],
      [{ schema: "todo", extra: 1 }, '"extra"'],
      ["not an object", "JSON object"],
    ];
    for (const [body, message] of cases) {
      const r = await subscribe(t, stream, "s", body);
      expect([JSON.stringify(body), r.status, r.body?.error]).toEqual([JSON.stringify(body), 400, expect.stringContaining(message)]);
    }
    expect((await subscribe(t, stream, "bad name!", { schema: "todo" })).status).toBe(400);
    expect((await subscribe(t, stream, "s", { schema: "todo" }, users.ann!)).status).toBe(401);
    const prod = await t.request("PUT", `/_live/streams/${stream}/subscriptions/s`, { body: { schema: "todo" }, version: 1 });
    expect(prod.status).toBe(404); // production has no version deployed: refused before the stream is looked at
  });

  test("a wrong token, an unknown stream or a bad Last-Event-ID are refused", async () => {
    const { stream } = await createStream(t);
    for (const url of [
      `/_live/streams/${stream}?token=wrong`,
      `/_live/streams/${stream}`,
      "/_live/streams/dxxxxxxxxxxxxxxxxxxxxxx?token=x",
      "/_live/streams/zz?token=x",
    ]) {
      const r = await t.request("GET", url, { key: null });
      expect([url, r.status]).toEqual([url, 401]);
    }
    const bad = await t.app.handle(new Request(`http://localhost/_live/streams/${stream}?token=x&after=abc`));
    expect(bad.status).toBe(400);
  });

  test("limits: subscriptions and channels per stream, open streams per client address: 429", async () => {
    await t.admin("PUT", "/settings/development", { live: { subscriptionsPerStream: 2, channelsPerStream: 1, streamsPerIp: 1 } });
    try {
      const { stream, token } = await createStream(t);
      expect((await subscribe(t, stream, "a", { schema: "todo" })).status).toBe(200);
      expect((await subscribe(t, stream, "b", { schema: "todo" })).status).toBe(200);
      expect((await subscribe(t, stream, "c", { schema: "todo" })).status).toBe(429);
      expect((await subscribe(t, stream, "a", { schema: "todo", query: "done=true" })).status).toBe(200); // a replace is no new one
      expect((await t.request("PUT", `/_live/streams/${stream}/channels/public:x`)).status).toBe(200);
      expect((await t.request("PUT", `/_live/streams/${stream}/channels/public:y`)).status).toBe(429);
      expect((await t.request("PUT", `/_live/streams/${stream}/channels/user:ann`)).status).toBe(400);
      const r = await connect(t, stream, token);
      const second = await createStream(t);
      const refused = await t.app.handle(new Request(`http://localhost/_live/streams/${second.stream}?token=${second.token}`));
      expect([refused.status, refused.headers.get("retry-after")]).toEqual([429, "10"]);
      await r.close();
    } finally {
      await t.admin("PUT", "/settings/development", { live: { subscriptionsPerStream: 50, channelsPerStream: 20, streamsPerIp: 1000 } });
    }
  });

  test("a client that reads nothing is cut off past its buffer; it can resume from the log", async () => {
    await t.admin("PUT", "/settings/development", { live: { bufferBytes: 16 * 1024 } });
    try {
      const { stream, token } = await createStream(t);
      await subscribe(t, stream, "s", { schema: "todo", query: "priority=-7" });
      const res = await t.app.handle(new Request(`http://localhost/_live/streams/${stream}?token=${token}`));
      expect(res.status).toBe(200);
      const hub = t.burrow.live.hubs.development;
      for (let i = 0; i < 20 && !hub.isConnected(stream); i++) await Bun.sleep(20);
      expect(hub.isConnected(stream)).toBe(true);
      const big = "x".repeat(2000);
      for (let i = 0; i < 40; i++) await write("POST", "/todo", { title: big, priority: -7 });
      for (let i = 0; i < 100 && hub.isConnected(stream); i++) await Bun.sleep(20);
      expect(hub.isConnected(stream)).toBe(false);
      await res.body?.cancel();
      const again = await connect(t, stream, token, { after: 0 });
      const replayed = await again.take(40);
      expect(replayed.every((e) => e.event === "create")).toBe(true);
      await again.close();
    } finally {
      await t.admin("PUT", "/settings/development", { live: { bufferBytes: 1024 * 1024 } });
    }
  });
});
