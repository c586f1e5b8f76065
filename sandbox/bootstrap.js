// Runs inside QuickJS before a bundle is installed (Burrow's custom code sandbox, guest side). It takes the two
// host functions off the global object - `__host(operation number, argsJson) -> Promise<json> | json` and
// `__done(status or 0 when failed, headers JSON or "" (the error's JSON when failed), kind 0 json | 1 text |
// 2 bytes | 3 text as its JSON, payload)` - builds the frozen `services` object on the first, defines the global
// `reject(status, message)` (a hook's refusal), and exposes `__burrow.install(exports)` (checks the bundle's
// methods, hooks and jobs, answers them as JSON) and `__burrow.run(name, requestJson)` (one call: a method by
// name, `hook:<schema>:<event>` or `job:<name>`; the input in as JSON, the answer out through `__done`).
(() => {
  var host = globalThis.__host;
  var done = globalThis.__done;
  var ops = JSON.parse(globalThis.__serviceOps);
  delete globalThis.__host;
  delete globalThis.__done;
  delete globalThis.__serviceOps;
  var NAME = /^[a-z][a-z0-9_]{0,63}$/;
  var SCHEMA = /^[a-z][a-z0-9_]{0,63}$/;
  var EVENTS = ["beforeCreate", "afterCreate", "beforeUpdate", "afterUpdate", "beforeDelete", "afterDelete", "beforeSignup", "afterSignup"];
  var MAX_JOB_MS = 15 * 60 * 1000;

  // A hook's refusal: only `reject` makes one, so a thrown error can never pass for it by its shape.
  var refusals = new WeakSet();
  function reject(status, message) {
    if (typeof status !== "number" || status % 1 !== 0 || status < 400 || status > 599)
      throw new TypeError("reject(status, message): status must be an integer from 400 to 599");
    var e = new Error(typeof message === "string" ? message : String(message ?? "refused"));
    e.name = "Rejection";
    e.status = status;
    refusals.add(e);
    return e;
  }
  Object.defineProperty(globalThis, "reject", { value: reject, enumerable: false });

  function parse(out) {
    return out === undefined ? undefined : JSON.parse(out);
  }

  // A service call answers a promise; the host gives back a promise, or the JSON answer itself when it had it at once.
  // The operation crosses as its number in the order of `ops` (a number is cheaper to hand over than two strings).
  function op(index) {
    return (...args) => {
      var out = host(index, JSON.stringify(args));
      if (out !== null && typeof out === "object") return out.then(parse);
      try {
        return Promise.resolve(parse(out));
      } catch (e) {
        return Promise.reject(e);
      }
    };
  }
  var services = { reject: reject };
  var count = 0;
  Object.keys(ops).forEach((service) => {
    var s = {};
    ops[service].forEach((name) => {
      s[name] = op(count++);
    });
    services[service] = Object.freeze(s);
  });
  Object.freeze(services);

  var methods = new Map();
  var hooks = new Map();
  var jobs = new Map();

  function installMethods(list) {
    var seen = [];
    if (list === undefined) return seen;
    if (!Array.isArray(list)) throw new TypeError("`methods` must be an array of { name, params, execute }");
    list.forEach((m, i) => {
      if (!m || typeof m !== "object") throw new TypeError(`methods[${i}] is not an object`);
      if (typeof m.name !== "string" || !NAME.test(m.name))
        throw new TypeError(`methods[${i}].name must match ^[a-z][a-z0-9_]{0,63}$, got ${JSON.stringify(m.name)}`);
      if (methods.has(m.name)) throw new TypeError(`method ${m.name} is defined twice`);
      if (typeof m.execute !== "function") throw new TypeError(`method ${m.name} has no execute function`);
      var params = m.params === undefined ? [] : m.params;
      if (!Array.isArray(params) || !params.every((p) => typeof p === "string" && p.length > 0 && p.length <= 128))
        throw new TypeError(`method ${m.name}: params must be an array of names`);
      methods.set(m.name, { execute: m.execute, params: params.slice() });
      seen.push({ name: m.name, params: params.slice() });
    });
    return seen;
  }

  function installHooks(table) {
    var seen = {};
    if (table === undefined) return seen;
    if (!table || typeof table !== "object" || Array.isArray(table))
      throw new TypeError("`hooks` must be an object: schema name -> { beforeCreate, afterCreate, ... }");
    Object.keys(table).forEach((schema) => {
      if (!SCHEMA.test(schema)) throw new TypeError(`hooks.${schema}: not a schema name (^[a-z][a-z0-9_]{0,63}$)`);
      var of = table[schema];
      if (!of || typeof of !== "object") throw new TypeError(`hooks.${schema} must be an object of hook functions`);
      var events = [];
      Object.keys(of).forEach((event) => {
        if (EVENTS.indexOf(event) < 0) throw new TypeError(`hooks.${schema}.${event}: not a hook (${EVENTS.join(", ")})`);
        if (typeof of[event] !== "function") throw new TypeError(`hooks.${schema}.${event} must be a function`);
        hooks.set(`${schema}:${event}`, of[event]);
        events.push(event);
      });
      if (events.length) seen[schema] = events;
    });
    return seen;
  }

  function installJobs(list) {
    var seen = [];
    if (list === undefined) return seen;
    if (!Array.isArray(list)) throw new TypeError("`jobs` must be an array of { name, schedule, timeoutMs, run }");
    list.forEach((j, i) => {
      if (!j || typeof j !== "object") throw new TypeError(`jobs[${i}] is not an object`);
      if (typeof j.name !== "string" || !NAME.test(j.name))
        throw new TypeError(`jobs[${i}].name must match ^[a-z][a-z0-9_]{0,63}$, got ${JSON.stringify(j.name)}`);
      if (jobs.has(j.name)) throw new TypeError(`job ${j.name} is defined twice`);
      if (typeof j.schedule !== "string" || j.schedule.trim() === "" || j.schedule.length > 200)
        throw new TypeError(`job ${j.name}: schedule must be a cron expression such as "0 3 * * *" or "@daily"`);
      if (typeof j.run !== "function") throw new TypeError(`job ${j.name} has no run function`);
      var info = { name: j.name, schedule: j.schedule.trim() };
      if (j.timeoutMs !== undefined) {
        if (typeof j.timeoutMs !== "number" || j.timeoutMs % 1 !== 0 || j.timeoutMs < 1 || j.timeoutMs > MAX_JOB_MS)
          throw new TypeError(`job ${j.name}: timeoutMs must be an integer from 1 to ${MAX_JOB_MS} (15 minutes)`);
        info.timeoutMs = j.timeoutMs;
      }
      jobs.set(j.name, j.run);
      seen.push(info);
    });
    return seen;
  }

  function install(exports) {
    if (!exports || (exports.methods === undefined && exports.hooks === undefined && exports.jobs === undefined))
      throw new TypeError("the bundle must export `methods` (an array of { name, params, execute }), `hooks` or `jobs`");
    var out = { methods: installMethods(exports.methods), hooks: installHooks(exports.hooks), jobs: installJobs(exports.jobs) };
    return JSON.stringify(out);
  }

  function toBase64(bytes) {
    var chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    var out = "";
    for (let i = 0; i < bytes.length; i += 3) {
      const a = bytes[i],
        b = bytes[i + 1],
        c = bytes[i + 2];
      out +=
        chars[a >> 2] +
        chars[((a & 3) << 4) | (b >> 4)] +
        (i + 1 < bytes.length ? chars[((b & 15) << 2) | (c >> 6)] : "=") +
        (i + 2 < bytes.length ? chars[c & 63] : "=");
    }
    return out;
  }

  // A method's answer as (meta JSON, payload): the payload is the body's JSON text, its text, or base64 bytes.
  function finish(result) {
    if (result === undefined || result === null) return done(200, "", 0, "{}");
    if (typeof result !== "object") throw new TypeError("a method must return { status, body, headers }");
    var status = result.status === undefined ? 200 : result.status;
    if (typeof status !== "number" || status % 1 !== 0 || status < 200 || status > 599)
      throw new TypeError("status must be an integer from 200 to 599");
    var headers = "";
    if (result.headers !== undefined) {
      if (!result.headers || typeof result.headers !== "object") throw new TypeError("headers must be an object of strings");
      const copy = {};
      Object.keys(result.headers).forEach((k) => {
        if (typeof result.headers[k] !== "string") throw new TypeError(`header ${k} must be a string`);
        copy[k] = result.headers[k];
      });
      headers = JSON.stringify(copy);
    }
    var body = result.body;
    var kind = 0;
    var payload;
    if (typeof body === "string") {
      // The host reads a string up to its first NUL character: a text holding one crosses as its JSON (kind 3).
      kind = body.indexOf("\u0000") < 0 ? 1 : 3;
      payload = kind === 1 ? body : JSON.stringify(body);
    } else {
      if (body instanceof ArrayBuffer) body = new Uint8Array(body);
      if (ArrayBuffer.isView(body)) {
        kind = 2;
        payload = toBase64(new Uint8Array(body.buffer, body.byteOffset, body.byteLength));
      } else {
        payload = body === undefined ? "{}" : JSON.stringify(body);
        if (payload === undefined) payload = "null";
      }
    }
    done(status, headers, kind, payload);
  }

  function failed(e) {
    var info =
      e !== null && typeof e === "object" ? { name: String(e.name), message: String(e.message) } : { name: "Error", message: String(e) };
    if (e !== null && typeof e === "object" && refusals.has(e)) info.status = e.status;
    done(0, JSON.stringify(info), 0, "");
  }

  function settle(result) {
    try {
      finish(result);
    } catch (e) {
      failed(e);
    }
  }

  // A hook's or job's answer: its value as JSON (a before-hook's changed object; undefined is null).
  function settleValue(value) {
    try {
      const text = value === undefined ? "null" : JSON.stringify(value);
      done(200, "", 0, text === undefined ? "null" : text);
    } catch (e) {
      failed(e);
    }
  }

  function start(fn, input, then) {
    var result;
    try {
      result = fn(input, services);
    } catch (e) {
      return failed(e);
    }
    if (result !== null && typeof result === "object" && typeof result.then === "function") result.then(then, failed);
    else then(result);
  }

  // One call: answers through `done` - at once when the code is synchronous, else when its promise settles.
  function run(name, requestJson) {
    if (name.startsWith("hook:")) {
      const hook = hooks.get(name.slice(5));
      if (!hook) return failed(new TypeError(`no hook ${name.slice(5)}`));
      return start(hook, JSON.parse(requestJson), settleValue);
    }
    if (name.startsWith("job:")) {
      const job = jobs.get(name.slice(4));
      if (!job) return failed(new TypeError(`no job ${name.slice(4)}`));
      return start(job, Object.freeze(JSON.parse(requestJson)), settleValue);
    }
    var m = methods.get(name);
    if (!m) return failed(new TypeError(`no method ${name}`));
    start(m.execute, Object.freeze(JSON.parse(requestJson)), settle);
  }

  Object.defineProperty(globalThis, "__burrow", { value: Object.freeze({ install: install, run: run }), enumerable: false });
})();
