// The live filter: a query's conditions (docs/api/datastore.md#queries) compiled once into a JavaScript predicate
// over an object's full JSON (every field, NULL fields left out, file paths as stored), agreeing with the SQL that
// src/datastore/query/compile.ts writes for the same conditions: SQL NULL semantics, SQLite's comparison of values
// (numbers before text, text in UTF-8 byte order), containment in arrays and many-relationships, and the geo
// conditions with geo.ts's boxes and its haversine expression evaluated as SQLite evaluates it. Pure.

import { type FieldRef, clauseValue, compileConditions, list, resolveField } from "../datastore/query/compile.ts";
import { boxRects, capRects, parseGeo, type Rect } from "../datastore/query/geo.ts";
import type { Clause, Conditions } from "../datastore/query/tree.ts";
import type { CompiledSchema } from "../schema/compiled.ts";

type Obj = Record<string, unknown>;
export type Match = (obj: Obj) => boolean;
/** A value as SQLite compares it: INTEGER and REAL are numbers, TEXT strings; NULL is null. */
type Scalar = number | string;

const RAD = Math.PI / 180;

/**
 * A JSON member or array item as the value SQLite holds for it: booleans are the INTEGERs 1 and 0 (a boolean
 * column; json_each's value of true and false); anything else that is not a number or a string is NULL.
 */
function sqlValue(v: unknown): Scalar | null {
  switch (typeof v) {
    case "string":
    case "number":
      return v;
    case "boolean":
      return v ? 1 : 0;
    default:
      return null;
  }
}

/**
 * SQLite's BINARY collation compares UTF-8 bytes, that is code points; JavaScript compares UTF-16 units. They differ
 * only where surrogates (code points past U+FFFF) meet units U+E000 to U+FFFF, which sort before them in UTF-8.
 */
export function compareText(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if (x < 0xd800 || y < 0xd800) return x - y;
    return (x >= 0xe000 ? x - 0x800 : x + 0x2000) - (y >= 0xe000 ? y - 0x800 : y + 0x2000);
  }
  return a.length - b.length;
}

/** SQLite's order of two non-NULL values: every number before every text (no affinity applies to these values). */
function compare(a: Scalar, b: Scalar): number {
  if (typeof a === "number") return typeof b === "number" ? (a < b ? -1 : a > b ? 1 : 0) : -1;
  return typeof b === "string" ? compareText(a, b) : 1;
}

/** SQLite stores text as UTF-8: a lone surrogate in a bound value arrives as U+FFFD, so it is compared as one. */
const wellFormed = (v: Scalar): Scalar => (typeof v === "string" ? v.toWellFormed() : v);

/** A clause's value converted as compile.ts binds it. */
function bound(f: FieldRef, c: Clause): Scalar {
  return wellFormed(clauseValue(f, c.value, c) as Scalar);
}

/** An [in]/[nin] list as a set: SQL `IN` over values of one type is membership (numbers by value, texts exactly). */
function boundSet(f: FieldRef, c: Clause): ReadonlySet<Scalar> {
  return new Set(list(f, c).map((v) => wellFormed(v as Scalar)));
}

/** `EXISTS (SELECT 1 FROM json_each(col) WHERE value IN (...))`: NULL and non-arrays hold nothing. */
function holdsAny(v: unknown, values: ReadonlySet<Scalar>): boolean {
  if (!Array.isArray(v)) return false;
  for (const item of v) {
    const x = sqlValue(item);
    if (x !== null && values.has(x)) return true;
  }
  return false;
}

const isNull = (v: unknown) => v === undefined || v === null;

/** The point of a geopoint member, or null when it has none (`lat IS NULL OR lon IS NULL`). */
function pointOf(v: unknown): { lat: number; lon: number } | null {
  if (typeof v !== "object" || v === null) return null;
  const p = v as { lat?: unknown; lon?: unknown };
  return typeof p.lat === "number" && typeof p.lon === "number" ? (p as { lat: number; lon: number }) : null;
}

/** `lat BETWEEN lat1 AND lat2 AND lon BETWEEN lon1 AND lon2` for one of the rectangles (the R*Tree only narrows). */
function inRects(lat: number, lon: number, rects: readonly Rect[]): boolean {
  for (const r of rects) if (lat >= r.lat1 && lat <= r.lat2 && lon >= r.lon1 && lon <= r.lon2) return true;
  return false;
}

/**
 * geo.ts's distanceSql as SQLite evaluates it, term by term: the point's arguments bound as compile.ts binds them,
 * radians() as x * (pi / 180), power(x, 2) as x * x. (The C library's pow(x, 2) is not always correctly rounded:
 * about once in 10^5 it is one unit in the last place above x * x, so a point whose distance equals the radius to
 * the last bits may be decided differently.)
 */
function distanceTo(center: { lat: number; lon: number }): (lat: number, lon: number) => number {
  const pLat = center.lat * RAD;
  const cosP = Math.cos(center.lat * RAD);
  const pLon = center.lon * RAD;
  return (lat, lon) => {
    const a = Math.sin((lat * RAD - pLat) / 2);
    const b = Math.sin((lon * RAD - pLon) / 2);
    return 2 * Math.asin(Math.min(1.0, Math.sqrt(a * a + Math.cos(lat * RAD) * cosP * (b * b))));
  };
}

/** [near] and [within] (compile.ts's near/within case). */
function geoMatch(name: string, c: Clause): Match {
  const g = parseGeo(c.op as "near" | "within", name, c.value);
  if (g.kind === "box") {
    const rects = boxRects(g);
    return (o) => {
      const p = pointOf(o[name]);
      return p !== null && inRects(p.lat, p.lon, rects);
    };
  }
  if (g.radius === null) return (o) => pointOf(o[name]) !== null;
  const radius = g.radius;
  const distance = distanceTo(g);
  const rects = radius >= Math.PI ? null : capRects(g.lat, g.lon, radius);
  return (o) => {
    const p = pointOf(o[name]);
    return p !== null && (rects === null || inRects(p.lat, p.lon, rects)) && distance(p.lat, p.lon) <= radius;
  };
}

/** One clause (already validated by compileConditions), as compile.ts's clauseSql reads it. */
function clauseMatch(s: CompiledSchema, c: Clause): Match {
  const f = resolveField(s, c.field, "query");
  const name = f.name;
  const multi = f.kind === "multi";
  switch (c.op) {
    case "eq":
    case "ne": {
      // `col = ?` / `col IS NOT ?` (NULL IS NOT a value); on arrays `[NOT] EXISTS (... WHERE value = ?)`.
      const v = bound(f, c);
      const one = new Set([v]);
      const eq: Match = multi ? (o) => holdsAny(o[name], one) : (o) => sqlValue(o[name]) === v;
      return c.op === "eq" ? eq : (o) => !eq(o);
    }
    case "lt":
    case "lte":
    case "gt":
    case "gte": {
      const v = bound(f, c);
      const test = { lt: (d: number) => d < 0, lte: (d: number) => d <= 0, gt: (d: number) => d > 0, gte: (d: number) => d >= 0 }[c.op];
      return (o) => {
        const x = sqlValue(o[name]);
        return x !== null && test(compare(x, v));
      };
    }
    case "null":
      // `col IS [NOT] NULL`; a geopoint's first column, NULL exactly when the member is left out.
      return c.value.toLowerCase() === "true" ? (o) => isNull(o[name]) : (o) => !isNull(o[name]);
    case "empty":
      return c.value.toLowerCase() === "true" ? (o) => o[name] === "" : (o) => o[name] !== "";
    case "in":
    case "nin": {
      const values = boundSet(f, c);
      if (multi) return c.op === "in" ? (o) => holdsAny(o[name], values) : (o) => !holdsAny(o[name], values);
      if (c.op === "in") return (o) => values.has(sqlValue(o[name]) as Scalar);
      return (o) => {
        const x = sqlValue(o[name]);
        return x === null || !values.has(x);
      };
    }
    case "near":
    case "within":
      return geoMatch(name, c);
  }
}

function every(matches: Match[]): Match {
  if (matches.length === 1) return matches[0]!;
  return (o) => {
    for (const m of matches) if (!m(o)) return false;
    return true;
  };
}

function some(matches: Match[]): Match {
  return (o) => {
    for (const m of matches) if (m(o)) return true;
    return false;
  };
}

/**
 * The predicate of `conditions` (A AND (B OR C ...)) on objects of `s`, given as their full JSON. Every 400 of the
 * SQL compiler is thrown here, with its message and in its order (the SQL is compiled once to check), so a
 * subscription fails when it is made and never per object. Refusing owner-only fields to callers who may not see
 * them is the caller's part (datastore/viewer.ts's refuseOwnerOnly), as it is for queries.
 */
export function compileMatch(s: CompiledSchema, conditions: Conditions): Match {
  compileConditions(s, conditions, null);
  const parts = conditions.where.map((c) => clauseMatch(s, c));
  if (conditions.or) parts.push(some(conditions.or.map((group) => every(group.map((c) => clauseMatch(s, c))))));
  return parts.length === 0 ? () => true : every(parts);
}

/**
 * A condition every match must meet as `field = value` on a one-valued field (the first such top-level clause), so
 * that a hub can index subscriptions by it and look at only those a written object's value names; null when none.
 */
export function equalityOf(s: CompiledSchema, conditions: Conditions): { field: string; value: Scalar } | null {
  for (const c of conditions.where) {
    if (c.op !== "eq") continue;
    const f = resolveField(s, c.field, "query");
    if (f.kind === "multi" || f.kind === "geopoint") continue;
    return { field: f.name, value: bound(f, c) };
  }
  return null;
}

/** An object's field value as the index of equalityOf compares it (booleans as 1 and 0, as SQL does). */
export function indexValue(v: unknown): Scalar | null {
  return sqlValue(v);
}
