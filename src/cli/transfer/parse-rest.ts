// A running Parse Server's REST API as `burrow import --from-parse` reads it, with the master key: the schemas,
// every object of a class in pages ordered by objectId (the next page starts after the last objectId, so objects
// added meanwhile never shift a page and a resumed pull starts exactly after its checkpoint), exact counts, a
// relation's members, and files. Network errors, 429 and 5xx are retried with backoff; other answers are errors
// naming the call.

import { ConfigError } from "../../config.ts";

/** One class as GET /schemas describes it: field -> {type, targetClass}. */
export interface ParseClassSchema {
  className: string;
  fields: Record<string, { type: string; targetClass?: string }>;
}

type Raw = Record<string, unknown>;

const ATTEMPTS = 6;
const TIMEOUT_MS = 60_000;

/** Parse's own classes have their own routes; `/classes/_User` is not one of them on every version. */
function classPath(cls: string): string {
  const own: Record<string, string> = { _User: "/users", _Role: "/roles", _Installation: "/installations", _Session: "/sessions" };
  return own[cls] ?? `/classes/${encodeURIComponent(cls)}`;
}

export class ParseRest {
  readonly base: string;

  constructor(
    url: string,
    private readonly appId: string,
    private readonly masterKey: string,
    private readonly sleep = (ms: number) => Bun.sleep(ms),
  ) {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw new ConfigError(`--from-parse must be the Parse Server's URL (e.g. https://example.com/parse), not ${JSON.stringify(url)}`);
    }
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new ConfigError(`--from-parse must be an http(s) URL, not ${url}`);
    this.base = u.href.replace(/\/+$/, "");
  }

  /** A GET answered with JSON; retried on network errors, 429 and 5xx. */
  async get(path: string, params: Record<string, string> = {}): Promise<Raw> {
    const query = new URLSearchParams(params).toString();
    const url = `${this.base}${path}${query ? `?${query}` : ""}`;
    const headers = { "X-Parse-Application-Id": this.appId, "X-Parse-Master-Key": this.masterKey, accept: "application/json" };
    let last = "";
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      let res: Response;
      try {
        res = await fetch(url, { headers, signal: AbortSignal.timeout(TIMEOUT_MS) });
      } catch (e) {
        last = `cannot reach ${this.base}: ${(e as Error).message}`;
        await this.sleep(backoff(attempt));
        continue;
      }
      const text = await res.text();
      if (res.ok) {
        try {
          return JSON.parse(text) as Raw;
        } catch {
          throw new ConfigError(`GET ${path}: the answer is not JSON (is ${this.base} a Parse Server's URL, with its mount path?)`);
        }
      }
      last = `GET ${path}: ${res.status} ${errorOf(text)}${res.status === 404 ? ` (is ${this.base} the Parse Server's URL, with its mount path such as /parse?)` : ""}`;
      if (res.status !== 429 && res.status < 500) break;
      await this.sleep(backoff(attempt));
    }
    throw new ConfigError(`Parse Server ${last}`);
  }

  /** Every class with its fields (GET /schemas needs the master key). */
  async schemas(): Promise<ParseClassSchema[]> {
    const r = await this.get("/schemas");
    if (!Array.isArray(r.results)) throw new ConfigError("Parse Server GET /schemas: no results (is the master key right?)");
    return r.results as ParseClassSchema[];
  }

  /** The exact number of objects (an unfiltered count on PostgreSQL is the planner's estimate). */
  async count(cls: string): Promise<number> {
    const r = await this.get(classPath(cls), { where: JSON.stringify({ objectId: { $exists: true } }), count: "1", limit: "0" });
    return Number(r.count ?? 0);
  }

  /** One page of a class in objectId order after `after` (null: from the start); `keys` limits the fields. */
  async page(cls: string, after: string | null, limit: number, o: { keys?: string; where?: Raw } = {}): Promise<Raw[]> {
    const where: Raw = { ...(o.where ?? {}) };
    if (after !== null) where.objectId = { $gt: after };
    const params: Record<string, string> = { order: "objectId", limit: String(limit) };
    if (Object.keys(where).length) params.where = JSON.stringify(where);
    if (o.keys) params.keys = o.keys;
    const r = await this.get(classPath(cls), params);
    if (!Array.isArray(r.results)) throw new ConfigError(`Parse Server GET ${classPath(cls)}: no results`);
    return r.results as Raw[];
  }

  /** Every object of a class, page by page (objectId order), from after `after`. */
  async *pages(cls: string, limit: number, o: { keys?: string; where?: Raw; after?: string | null } = {}): AsyncGenerator<Raw[]> {
    let after = o.after ?? null;
    for (;;) {
      const rows = await this.page(cls, after, limit, o);
      if (rows.length === 0) return;
      yield rows;
      const last = rows.at(-1)!.objectId;
      if (typeof last !== "string" || rows.length < limit) return;
      after = last;
    }
  }

  /** The objectIds of `target` objects in relation `field` of `cls` object `id`. */
  async relatedIds(cls: string, id: string, field: string, target: string): Promise<string[]> {
    const where = { $relatedTo: { object: { __type: "Pointer", className: cls, objectId: id }, key: field } };
    const out: string[] = [];
    for await (const rows of this.pages(target, 1000, { keys: "objectId", where }))
      for (const r of rows) if (typeof r.objectId === "string") out.push(r.objectId);
    return out;
  }

  /** A file's bytes and type; retried like the API calls. */
  async download(url: string): Promise<{ bytes: Uint8Array; contentType: string }> {
    let last = "";
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      try {
        const res = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS) });
        if (res.ok)
          return {
            bytes: new Uint8Array(await res.arrayBuffer()),
            contentType: res.headers.get("content-type") ?? "application/octet-stream",
          };
        last = `${res.status}`;
        await res.body?.cancel();
        if (res.status !== 429 && res.status < 500) break;
      } catch (e) {
        last = (e as Error).message;
      }
      await this.sleep(backoff(attempt));
    }
    throw new Error(`cannot download ${url}: ${last}`);
  }

  /** Where a file without a URL (a name only) is served: `<server>/files/<appId>/<name>`. */
  fileUrl(name: string): string {
    return `${this.base}/files/${encodeURIComponent(this.appId)}/${encodeURIComponent(name)}`;
  }
}

function backoff(attempt: number): number {
  return Math.min(500 * 2 ** (attempt - 1), 8000);
}

function errorOf(text: string): string {
  try {
    const j = JSON.parse(text) as { error?: unknown; code?: unknown };
    if (j.error !== undefined) return `${String(j.error)}${j.code !== undefined ? ` (code ${String(j.code)})` : ""}`;
  } catch {}
  return text
    .replace(/<[^>]*>/g, " ")
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, 200);
}
