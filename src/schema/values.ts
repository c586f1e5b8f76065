// Field values between request JSON and SQL columns: type checking, encoding, decoding, and the
// lenient conversion used when a forced schema change alters a field's type. Pure.

import type { InValue, Value } from "@libsql/core/api";
import type { FieldDef, ItemType } from "./definition.ts";
import { GEOPOINT, ValueTypeError, describeValue, itemMismatch, keyOf, valueMismatch } from "./value-errors.ts";

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const MAX_LAT = 90;
const MIN_LON = -180;
const MAX_LON_EXCLUSIVE = 180;

export function isLatitude(v: unknown): v is number {
  return typeof v === "number" && Number.isFinite(v) && v >= -MAX_LAT && v <= MAX_LAT;
}

export function isLongitude(v: unknown): v is number {
  return typeof v === "number" && Number.isFinite(v) && v >= MIN_LON && v < MAX_LON_EXCLUSIVE;
}

/** Whether a string value is meant as a binary field's upload (it starts with a Content-Type header line). */
export function looksLikeUpload(v: string): boolean {
  return /^\s*content-type\s*:/i.test(v.slice(0, 64));
}

function checkItem(items: ItemType, v: unknown): boolean {
  switch (items) {
    case "string":
      return typeof v === "string";
    case "integer":
      return typeof v === "number" && Number.isSafeInteger(v);
    case "float":
      return typeof v === "number" && Number.isFinite(v);
    case "boolean":
      return typeof v === "boolean";
  }
}

/** Encode a non-null JSON value into the field's column values, or throw ValueTypeError saying what was expected. */
export function encodeValue(def: FieldDef, v: unknown): InValue[] {
  switch (def.type) {
    case "string":
    case "password":
      if (typeof v === "string") return [v];
      break;
    case "integer":
      if (typeof v === "number" && Number.isSafeInteger(v)) return [v];
      break;
    case "float":
      if (typeof v === "number" && Number.isFinite(v)) return [v];
      break;
    case "boolean":
      if (typeof v === "boolean") return [v ? 1 : 0];
      break;
    case "array":
      if (!Array.isArray(v)) break;
      checkItems(def.items!, v);
      return [JSON.stringify(v)];
    case "geopoint":
      return encodeGeopoint(v);
    case "relationship":
      if (!def.many) {
        if (isKeyValue(v)) return [v];
        break;
      }
      if (!Array.isArray(v)) break;
      checkKeys(def.schema, v);
      return [JSON.stringify([...new Set(v)])];
  }
  throw valueMismatch(def, v);
}

function checkItems(items: ItemType, list: readonly unknown[]): void {
  for (let i = 0; i < list.length; i++) if (!checkItem(items, list[i])) throw itemMismatch(items, list[i], i);
}

/** Keys of related objects in an array; throws naming the first that is not a key. */
export function checkKeys(schema: string | undefined, list: readonly unknown[]): void {
  for (let i = 0; i < list.length; i++) if (!isKeyValue(list[i])) throw new ValueTypeError(keyOf(schema), describeValue(list[i]), `[${i}]`);
}

function encodeGeopoint(v: unknown): InValue[] {
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw new ValueTypeError(GEOPOINT, describeValue(v));
  const g = v as Record<string, unknown>;
  for (const k of Object.keys(g))
    if (k !== "lat" && k !== "lon" && k !== "distance") throw new ValueTypeError(`${GEOPOINT} without other members`, describeValue(v));
  if (!isLatitude(g.lat)) throw new ValueTypeError("a latitude from -90 to 90", describeValue(g.lat), ".lat");
  if (!isLongitude(g.lon)) throw new ValueTypeError("a longitude from -180 to less than 180", describeValue(g.lon), ".lon");
  return [g.lat, g.lon];
}

/** A primary-key value as accepted in bodies and paths. */
export function isKeyValue(v: unknown): v is string {
  return typeof v === "string" && v.length > 0 && v.length <= 256 && !/[\u0000-\u001f]/.test(v);
}

/** Decode a field's column values (as read from SQL) into its JSON form. */
export function decodeValue(def: FieldDef, cols: readonly Value[]): Json {
  const v = cols[0];
  if (v === null || v === undefined) return null;
  switch (def.type) {
    case "boolean":
      return v === 1 || v === 1n;
    case "array":
      return JSON.parse(v as string);
    case "relationship":
      return def.many ? JSON.parse(v as string) : (v as string);
    case "geopoint": {
      const lon = cols[1];
      return lon === null || lon === undefined ? null : { lat: Number(v), lon: Number(lon) };
    }
    case "integer":
    case "float":
      return Number(v);
    default:
      return v as Json;
  }
}

/**
 * Best-effort conversion of a stored JSON value to another field type (forced type changes).
 * Returns null when the value has no faithful form in the new type.
 */
export function convertValue(value: Json, to: FieldDef): Json {
  if (value === null) return null;
  const scalar = (v: Json, t: FieldDef["type"] | ItemType): Json => {
    switch (t) {
      case "string":
        return typeof v === "string" ? v : typeof v === "number" || typeof v === "boolean" ? String(v) : null;
      case "integer": {
        const n = typeof v === "string" && v.trim() !== "" ? Number(v) : typeof v === "boolean" ? Number(v) : v;
        return typeof n === "number" && Number.isSafeInteger(n) ? n : null;
      }
      case "float": {
        const n = typeof v === "string" && v.trim() !== "" ? Number(v) : typeof v === "boolean" ? Number(v) : v;
        return typeof n === "number" && Number.isFinite(n) ? n : null;
      }
      case "boolean":
        if (typeof v === "boolean") return v;
        if (v === 1 || v === "true" || v === "1") return true;
        if (v === 0 || v === "false" || v === "0") return false;
        return null;
      default:
        return null;
    }
  };
  try {
    switch (to.type) {
      case "array": {
        const list = Array.isArray(value) ? value : [value];
        const out = list.map((x) => scalar(x, to.items!));
        return out.some((x) => x === null) ? null : out;
      }
      case "relationship": {
        const list = (Array.isArray(value) ? value : [value]).filter(isKeyValue);
        if (to.many) return [...new Set(list)];
        return list.length === 1 ? list[0]! : null;
      }
      case "geopoint": {
        const g = value as Record<string, Json>;
        return typeof g === "object" && !Array.isArray(g) && isLatitude(g.lat) && isLongitude(g.lon) ? { lat: g.lat, lon: g.lon } : null;
      }
      case "password":
      case "binary":
        return typeof value === "string" ? value : null;
      default:
        return Array.isArray(value) ? (value.length === 1 ? scalar(value[0]!, to.type) : null) : scalar(value, to.type);
    }
  } catch {
    return null;
  }
}
