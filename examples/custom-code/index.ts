// An example custom code bundle that uses every service: deploy it with `burrow code deploy examples/custom-code`
// (after `burrow schema apply examples/custom-code/schemas`), then call /hello_world, /todo_add, ... with the
// development key. Type-check with `bun check` in this directory.
/// <reference path="../../sandbox/burrow.d.ts" />

import { badRequest, jsonBody } from "./lib/respond.ts";

// Hooks on todo (validation, a derived field, a push after a create) and a nightly cleanup job.
export { hooks } from "./lib/hooks.ts";
export { jobs } from "./lib/jobs.ts";

const LIST_TTL_MS = 30_000;

export const methods: Burrow.Method[] = [
  {
    // GET /hello_world?name=Ann
    name: "hello_world",
    params: ["name"],
    execute(request) {
      return { body: { msg: `Hello, ${request.params.name ?? "world"}` } };
    },
  },
  {
    // Who is calling: the MAC-signed user (or null), the API version and environment.
    name: "whoami",
    execute(request) {
      return { body: { user: request.loggedInUser, apiVersion: request.apiVersion, environment: request.environment, verb: request.verb } };
    },
  },
  {
    // POST /todo_add {"title": "...", "priority": 2, "lat": 52.5, "lon": 13.4}
    name: "todo_add",
    async execute(request, { data, log, cache }) {
      const body = jsonBody(request);
      if (!body || typeof body.title !== "string") return badRequest('send {"title": "..."}');
      const todo: Record<string, unknown> = {
        title: body.title,
        done: false,
        priority: typeof body.priority === "number" ? body.priority : 1,
        done_count: 0,
      };
      if (typeof body.lat === "number" && typeof body.lon === "number") todo.location = { lat: body.lat, lon: body.lon };
      if (request.loggedInUser) todo.assignee = request.loggedInUser;
      const created = await data.create("todo", todo);
      await cache.delete("todo_open");
      await log.info("todo added", { id: created.todo_id, by: request.loggedInUser });
      return { status: 201, body: created };
    },
  },
  {
    // GET /todo_open: open todos, most urgent first, cached for 30 s.
    name: "todo_open",
    async execute(_request, { data, cache }) {
      const cached = await cache.get("todo_open");
      if (cached !== null) return { headers: { "x-cache": "hit" }, body: JSON.parse(cached) };
      const open = await data.query("todo", {
        where: { done: false },
        orderBy: [["priority", "desc"], "title"],
        select: ["title", "priority"],
        limit: 20,
      });
      const total = await data.count("todo", { where: { done: false } });
      const answer = { total, todos: open };
      await cache.set("todo_open", JSON.stringify(answer), LIST_TTL_MS);
      return { headers: { "x-cache": "miss" }, body: answer };
    },
  },
  {
    // PUT /todo_done {"id": "..."}: only an open todo is closed (conditional update); counts the closes.
    name: "todo_done",
    async execute(request, { data, cache, log }) {
      const body = jsonBody(request);
      if (!body || typeof body.id !== "string") return badRequest('send {"id": "..."}');
      const updated = await data.update("todo", body.id, { set: { done: true }, increment: { done_count: 1 } }, { where: { done: false } });
      if (!updated) return { status: 409, body: { error: "no open todo with that id" } };
      await cache.delete("todo_open");
      await log.debug("todo done", { id: body.id });
      return { body: updated };
    },
  },
  {
    // GET /todo_near?lat=52.5&lon=13.4&km=5: open todos within km, nearest first.
    name: "todo_near",
    params: ["lat", "lon", "km"],
    async execute(request, { data }) {
      const lat = Number(request.params.lat);
      const lon = Number(request.params.lon);
      const km = Number(request.params.km ?? "10");
      if (!Number.isFinite(lat) || !Number.isFinite(lon)) return badRequest("lat and lon are numbers");
      return { body: await data.query("todo", { where: { location: { near: { lat, lon, radius: km / 6367.5 } } } }) };
    },
  },
  {
    // DELETE /todo_clear: removes every done todo.
    name: "todo_clear",
    async execute(_request, { data, cache }) {
      const removed = await data.deleteWhere("todo", { where: { done: true } });
      await cache.delete("todo_open");
      return { body: { removed } };
    },
  },
  {
    // POST /device {"type": "ios", "token": "..."}: registers the signed-in user's device.
    name: "device",
    async execute(request, { push }) {
      const body = jsonBody(request);
      if (!request.loggedInUser) return { status: 401, body: { error: "sign in first" } };
      if (!body || typeof body.type !== "string" || typeof body.token !== "string") return badRequest('send {"type", "token"}');
      await push.registerToken(request.loggedInUser, { type: body.type as Burrow.TokenType, token: body.token });
      return { body: { tokens: (await push.tokensOfUsers([request.loggedInUser]))[request.loggedInUser] } };
    },
  },
  {
    // POST /remind {"user": "ann", "message": "..."}: a push to every device of a user.
    name: "remind",
    async execute(request, { push, log }) {
      const body = jsonBody(request);
      if (!body || typeof body.user !== "string" || typeof body.message !== "string") return badRequest('send {"user", "message"}');
      const sent = await push.sendToUsers([body.user], { message: body.message, badge: 1 });
      await log.info("reminder queued", { user: body.user, queued: sent.queued });
      return { body: sent };
    },
  },
  {
    // GET /weather?city=Berlin: calls a third-party API whose URL and key are in the settings (code.config).
    name: "weather",
    params: ["city"],
    async execute(request, { http, config, log }) {
      const base = await config.get("WEATHER_URL");
      const key = await config.get("WEATHER_KEY");
      if (!base) return { status: 503, body: { error: "set code.config.WEATHER_URL in the settings" } };
      try {
        const res = await http.get(`${base}?city=${encodeURIComponent(request.params.city ?? "")}`, {
          headers: { authorization: `Bearer ${key ?? ""}` },
          timeoutMs: 5000,
        });
        return {
          status: res.status === 200 ? 200 : 502,
          body: { upstream: res.status, forecast: res.status === 200 ? JSON.parse(res.body) : null },
        };
      } catch (e) {
        await log.warn("weather service failed", { message: String((e as Error).message) });
        return { status: 502, body: { error: String((e as Error).message) } };
      }
    },
  },
  {
    // GET /report: plain text with a download name.
    name: "report",
    async execute(_request, { data }) {
      const open = await data.count("todo", { where: { done: false } });
      const done = await data.count("todo", { where: { done: true } });
      return { headers: { "content-disposition": 'attachment; filename="report.txt"' }, body: `open: ${open}\ndone: ${done}\n` };
    },
  },
  {
    // GET /pixel: bytes (a 1x1 GIF).
    name: "pixel",
    execute() {
      const gif = [
        71, 73, 70, 56, 57, 97, 1, 0, 1, 0, 128, 0, 0, 0, 0, 0, 255, 255, 255, 33, 249, 4, 1, 0, 0, 0, 0, 44, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2,
        2, 68, 1, 0, 59,
      ];
      return { headers: { "content-type": "image/gif" }, body: new Uint8Array(gif) };
    },
  },
];
