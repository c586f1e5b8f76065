// Runs inside QuickJS before a bundle is installed (Burrow's custom code sandbox, guest side). It takes the two
// host functions off the global object - `__host(operation number, argsJson) -> Promise<json> | json` and
// `__done(status or 0 when failed, headers JSON or "" (the error's JSON when failed), kind 0 json | 1 text |
// 2 bytes | 3 text as its JSON, payload)` - builds the frozen `services` object on the first, and exposes
// `__burrow.install(exports)` (checks the bundle's methods, answers them as JSON) and
// `__burrow.run(name, requestJson)` (one call: the request in as JSON, the answer out through `__done`).
(() => {
  var host = globalThis.__host;
  var done = globalThis.__done;
  var ops = JSON.parse(globalThis.__serviceOps);
  delete globalThis.__host;
  delete globalThis.__done;
  delete globalThis.__serviceOps;
  var NAME = /^[a-z][a-z0-9_]{0,63}$/;

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
  var services = {};
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

  function install(exports) {
    var list = exports?.methods;
    if (!Array.isArray(list)) throw new TypeError("the bundle must export `methods`, an array of { name, params, execute }");
    var seen = [];
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
    return JSON.stringify(seen);
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
    done(0, JSON.stringify(info), 0, "");
  }

  function settle(result) {
    try {
      finish(result);
    } catch (e) {
      failed(e);
    }
  }

  // One call: answers through `done` - at once when the method is synchronous, else when its promise settles.
  function run(name, requestJson) {
    var m = methods.get(name);
    if (!m) return failed(new TypeError(`no method ${name}`));
    var result;
    try {
      result = m.execute(Object.freeze(JSON.parse(requestJson)), services);
    } catch (e) {
      return failed(e);
    }
    if (result !== null && typeof result === "object" && typeof result.then === "function") result.then(settle, failed);
    else settle(result);
  }

  Object.defineProperty(globalThis, "__burrow", { value: Object.freeze({ install: install, run: run }), enumerable: false });
})();
