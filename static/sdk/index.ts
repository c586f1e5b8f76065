// The Burrow client library, served by the server at /_sdk/burrow.js as one ES module (docs/api/sdk.md):
// `connect(options)` answers the client of one app environment: users, schemas, custom code, live data and push.

import { Client, type ConnectOptions } from "./client.ts";
import { Collection } from "./collection.ts";
import { Live } from "./live.ts";
import { push } from "./push.ts";
import { type Users, users } from "./users.ts";

export { BurrowError, NetworkError } from "./errors.ts";

export function connect(options: ConnectOptions) {
  if (!options?.url || !options.publicKey) throw new TypeError("connect needs {url, publicKey}");
  const c = new Client(options);
  const live = new Live(c);
  const u = users(c, "user");
  const collections = new Map<string, Collection>();
  return {
    /** The built-in user schema's accounts; `users("name")` for another user schema. */
    users: Object.assign((schema: string): Users => users(c, schema), u),
    schema(name: string): Collection {
      let col = collections.get(name);
      if (!col) collections.set(name, (col = new Collection(c, live, name)));
      return col;
    },
    /** Call a custom code method: GET and DELETE send `params` in the query, POST and PUT as the JSON body. */
    async call(method: string, params?: unknown, o: { method?: "GET" | "POST" | "PUT" | "DELETE" } = {}) {
      const verb = o.method ?? "POST";
      const inQuery = verb === "GET" || verb === "DELETE";
      const query = inQuery && params ? new URLSearchParams(params as Record<string, string>).toString() : undefined;
      return (await c.call(verb, `/${encodeURIComponent(method)}`, { query, body: inQuery ? undefined : (params ?? {}) })).body;
    },
    push: push(c),
    /** Any other call of the API, signed as the rest: the parsed body, status and headers. */
    request: (method: string, path: string, o?: { body?: unknown; query?: string; headers?: Record<string, string> }) =>
      c.call(method, path, o),
  };
}
