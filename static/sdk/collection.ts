// One schema's objects (docs/api/datastore.md): create, get, update, save, remove, find with paging and totals,
// counters, array and relationship paths, and live subscriptions to its changes.

import type { Json } from "./errors.ts";
import type { Client } from "./client.ts";
import { withUploads } from "./files.ts";
import type { Live, SubscribeHandlers, SubscribeOptions } from "./live.ts";
import { whereQuery } from "./query.ts";

export interface ReadOptions {
  select?: string | string[];
  expand?: number;
}

export interface FindOptions extends ReadOptions {
  where?: Record<string, unknown>;
  orderBy?: string | string[];
  range?: [number, number?];
  count?: boolean;
}

const list = (v: string | string[]) => (Array.isArray(v) ? v.join(",") : v);
const seg = (v: unknown) => encodeURIComponent(String(v));

function readHeaders(o: ReadOptions & { orderBy?: string | string[] }): Record<string, string> {
  const h: Record<string, string> = {};
  if (o.select !== undefined) h["x-service-select"] = list(o.select);
  if (o.expand !== undefined) h["x-service-expand"] = String(o.expand);
  if (o.orderBy !== undefined) h["x-service-orderby"] = list(o.orderBy);
  return h;
}

/** The total of `Content-Range: objects a-b/total`, or null. */
const totalOf = (h: Headers) => {
  const m = /\/(\d+)\s*$/.exec(h.get("content-range") ?? "");
  return m ? Number(m[1]) : null;
};

export class Collection {
  constructor(
    private c: Client,
    private live: Live,
    readonly name: string,
  ) {}

  private path(id?: unknown, field?: string) {
    return `/${seg(this.name)}${id === undefined ? "" : `/${seg(id)}`}${field === undefined ? "" : `/${seg(field)}`}`;
  }

  async create(obj: object | object[]): Promise<Json> {
    return (await this.c.call("POST", this.path(), { body: await withUploads(obj) })).body;
  }

  async get(id: string, o: ReadOptions = {}): Promise<Json> {
    return (await this.c.call("GET", this.path(id), { headers: readHeaders(o) })).body;
  }

  async update(id: string, fields: object): Promise<Json> {
    return (await this.c.call("PUT", this.path(id), { body: await withUploads(fields) })).body;
  }

  /** Create or update by key (and nested objects, with `relations` "field=schema&..."). */
  async save(obj: object, o: { relations?: string } = {}): Promise<Json> {
    const headers = { "x-service-relations": o.relations ?? "" };
    return (await this.c.call("POST", this.path(), { body: await withUploads(obj), headers })).body;
  }

  async remove(id: string, o: { cascade?: boolean } = {}): Promise<void> {
    await this.c.call("DELETE", this.path(id), { headers: o.cascade ? { "x-service-cascadedelete": "true" } : {} });
  }

  /** Delete every match of `where` the caller may delete. */
  async removeWhere(where: Record<string, unknown>): Promise<void> {
    await this.c.call("DELETE", this.path(), { query: whereQuery(where) });
  }

  async find(o: FindOptions = {}): Promise<{ items: Json[]; total: number }> {
    const headers = readHeaders(o);
    const query = [whereQuery(o.where), o.expand === undefined ? "" : `_expand=${o.expand}`].filter(Boolean).join("&");
    delete headers["x-service-expand"];
    if (o.range) headers.range = `objects=${o.range[0]}-${o.range[1] ?? ""}`;
    const a = await this.c.call("GET", this.path(), { query, headers });
    const items = a.body as Json[];
    let total = totalOf(a.headers) ?? (o.range?.[0] ? null : items.length);
    if (total === null) {
      // A page past the end: the count call answers a total from two matches on, else there are 0 or 1.
      if (o.count) {
        const n = await this.c.call("GET", this.path(), { query, headers: { ...headers, range: "objects=0-0" } });
        total = totalOf(n.headers) ?? (n.body as Json[]).length;
      } else total = o.range![0] + items.length;
    }
    return { items, total };
  }

  /** Add to integer fields atomically: `{likes: 1, views: -2}`. */
  async increment(id: string, by: Record<string, number>): Promise<Json> {
    const body = Object.fromEntries(Object.entries(by).map(([k, n]) => [`${k}[inc]`, n]));
    return this.update(id, body);
  }

  /** Append values to an array field, or keys to a relationship; answers the whole object. */
  async append(id: string, field: string, values: unknown[]): Promise<Json> {
    return (await this.c.call("PUT", this.path(id, field), { body: values })).body;
  }

  /** Remove values (or references) from an array or relationship field; `cascade` deletes the related objects. */
  async pull(id: string, field: string, values: unknown[], o: { cascade?: boolean } = {}): Promise<void> {
    const headers: Record<string, string> = o.cascade ? { "x-service-cascadedelete": "true" } : {};
    await this.c.call("DELETE", `${this.path(id, field)}/${values.map(seg).join(",")}`, { headers });
  }

  /** Create objects in a relationship's schema and append their keys: `{succeeded, failed}`. */
  async createRelated(id: string, field: string, objs: object | object[]): Promise<{ succeeded: string[]; failed: string[] }> {
    return (await this.c.call("POST", this.path(id, field), { body: await withUploads(objs) })).body;
  }

  subscribe(o: SubscribeOptions, onEvent: (e: Json) => void, handlers: SubscribeHandlers = {}) {
    return this.live.subscribe(this.name, o, onEvent, handlers);
  }
}
