// An object's full JSON (the change log's, json-sql.ts without a viewer) rendered as one subscriber may read it:
// the same text `CompiledSchema.renderFor(viewer, "t")` writes for the row in SQL, optionally narrowed to selected
// fields. Members in json-sql.ts's order (key, the schema's fields, createddate, lastmoddate, sm_owner), NULLs and
// passwords left out, owner-only fields per viewer (docs/api/datastore.md#field-visibility), file paths made links
// with the viewer's base. Floats keep the text SQLite wrote when the object was parsed with parseFull. Pure.

import type { CompiledSchema } from "../schema/compiled.ts";
import type { FieldDef } from "../schema/definition.ts";
import { FILES_PATH, type FloatStyle, type Viewer } from "../schema/json-sql.ts";

type Obj = Record<string, unknown>;

/** Who reads: the file base and owner-only visibility of json-sql.ts's Viewer, and the selected fields (null: all). */
export interface LiveView {
  fileBase: string | null;
  owner: Viewer["owner"];
  /** Selected top-level field names (the key is always rendered); null for every field. */
  only: ReadonlySet<string> | null;
}

/** Where parseFull keeps the source text of the floats of an object (or of a geopoint inside it), by member. */
const FLOAT_TEXT = Symbol("float text");

/**
 * Parse a full JSON object keeping the text SQLite wrote for each float (a number written with "." or an
 * exponent), so that renderFor can write it back as it is: SQLite's digits are not always the shortest ones
 * JavaScript would write (see sqliteFloatText). The result is a plain object otherwise.
 */
export function parseFull(text: string): Obj {
  // Every float SQLite or JSON.stringify writes has a digit before its "." or exponent; without one, nothing to keep.
  if (!/\d[.eE]/.test(text)) return JSON.parse(text) as Obj;
  return JSON.parse(text, function (this: Record<PropertyKey, unknown>, key: string, value: unknown, context?: { source?: string }) {
    const source = context?.source;
    if (typeof value === "number" && source !== undefined && /[.eE]/.test(source)) {
      const texts = (this[FLOAT_TEXT] ??= Object.create(null)) as Record<string, string>;
      texts[key] = source;
    }
    return value;
  } as (key: string, value: unknown) => unknown) as Obj;
}

/**
 * A double as SQLite 3.47 and later write a REAL ("native"): 15 significant digits when they read back exactly,
 * else 17, trailing zeros dropped, "%!.17g" layout (".0" on whole numbers, exponent form below 1e-4 and from 1e17,
 * two exponent digits at least). As printf('%!.17g') ("digits17"): 17 digits. An approximation: SQLite computes
 * its digits in double-double arithmetic, and from 14 significant digits on its result sometimes differs in the
 * last digit or in the number of digits (up to 13 digits it agreed on every value tried); parseFull's text is exact.
 */
export function sqliteFloatText(x: number, style: FloatStyle = "native"): string {
  if (x === 0) return "0.0";
  const a = Math.abs(x);
  // Subnormal numbers come out of SQLite's decoding with 17 digits.
  const short = style === "native" && a >= 2.2250738585072014e-308 && Number(a.toPrecision(15)) === a;
  const [mantissa, exp] = (short ? a.toExponential() : a.toExponential(16)).split("e") as [string, string];
  const digits = mantissa.replace(".", "").replace(/0+$/, "") || "0";
  const e = Number(exp);
  let out: string;
  if (e < -4 || e >= 17) {
    const ae = Math.abs(e);
    out = `${digits[0]}.${digits.length > 1 ? digits.slice(1) : "0"}e${e < 0 ? "-" : "+"}${ae < 10 ? "0" : ""}${ae}`;
  } else if (e < 0) out = `0.${"0".repeat(-e - 1)}${digits}`;
  else if (digits.length <= e + 1) out = `${digits}${"0".repeat(e + 1 - digits.length)}.0`;
  else out = `${digits.slice(0, e + 1)}.${digits.slice(e + 1)}`;
  return x < 0 ? `-${out}` : out;
}

/** A float member of `holder` as SQLite wrote it: parseFull's text when it is this value's, else computed. */
function floatText(holder: object, key: string, v: number, style: FloatStyle): string {
  const text = (holder as Record<PropertyKey, Record<string, string> | undefined>)[FLOAT_TEXT]?.[key];
  return text !== undefined && Number(text) === v ? text : sqliteFloatText(v, style);
}

interface Member {
  name: string;
  def: FieldDef;
  /** `,"name":` */
  prefix: string;
}

interface Plan {
  /** `{"<key>":` */
  head: string;
  /** The schema's fields in definition order, passwords left out. */
  fields: Member[];
}

const plans = new WeakMap<CompiledSchema, Plan>();

function planOf(s: CompiledSchema): Plan {
  let plan = plans.get(s);
  if (!plan) {
    const fields = [...s.fields]
      .filter(([, def]) => def.type !== "password")
      .map(([name, def]) => ({ name, def, prefix: `,${JSON.stringify(name)}:` }));
    plan = { head: `{${JSON.stringify(s.pk)}:`, fields };
    plans.set(s, plan);
  }
  return plan;
}

/** A field's value as json-sql.ts's memberSql writes it, or null when the member is left out. */
function valueText(m: Member, full: Obj, v: unknown, fileBase: string | null, floats: FloatStyle): string | null {
  switch (m.def.type) {
    case "boolean":
      // CASE col WHEN 1 THEN true WHEN 0 THEN false END
      return v === true ? "true" : v === false ? "false" : null;
    case "float":
      return typeof v === "number" ? floatText(full, m.name, v, floats) : JSON.stringify(v);
    case "geopoint": {
      // json_object('lat', ..., 'lon', ...); left out unless both are there.
      const p = v as { lat?: unknown; lon?: unknown };
      if (typeof p !== "object" || typeof p.lat !== "number" || typeof p.lon !== "number") return null;
      return `{"lat":${floatText(p, "lat", p.lat, floats)},"lon":${floatText(p, "lon", p.lon, floats)}}`;
    }
    case "binary":
      // Stored files get the viewer's base; other values (imported URLs) stay as they are.
      if (fileBase !== null && typeof v === "string" && v.startsWith(FILES_PATH)) return JSON.stringify(fileBase + v);
      return JSON.stringify(v);
    default:
      // json_quote of text and integers; json() of stored arrays (written by JSON.stringify, so written alike).
      return JSON.stringify(v);
  }
}

/** Whether owner-only fields show on this object: json-sql.ts's `sm_owner = ? OR <key> = ?`. */
function ownerSees(s: CompiledSchema, full: Obj, owner: Viewer["owner"]): boolean {
  if (owner === "all") return true;
  if (owner === "none") return false;
  return full.sm_owner === owner.owner || (owner.self !== null && full[s.pk] === owner.self);
}

/**
 * `full` (an object of `s`'s table; members of other API versions are ignored) as the JSON text `s.renderFor`
 * writes for `view` in SQL, narrowed to `view.only` as objectJsonSql's `only` narrows it.
 */
export function renderFor(s: CompiledSchema, full: Obj, view: LiveView): string {
  const plan = planOf(s);
  const only = view.only;
  let out = plan.head + JSON.stringify(full[s.pk]);
  let sees: boolean | undefined;
  for (const m of plan.fields) {
    if (only !== null && !only.has(m.name)) continue;
    const v = full[m.name];
    if (v === undefined || v === null) continue;
    if (m.def.visibility === "owner" && !(sees ??= ownerSees(s, full, view.owner))) continue;
    const text = valueText(m, full, v, view.fileBase, s.floats);
    if (text !== null) out += m.prefix + text;
  }
  for (const date of ["createddate", "lastmoddate"] as const)
    if ((only === null || only.has(date)) && full[date] !== undefined) out += `,"${date}":${JSON.stringify(full[date])}`;
  if ((only === null || only.has("sm_owner")) && typeof full.sm_owner === "string") out += `,"sm_owner":${JSON.stringify(full.sm_owner)}`;
  return `${out}}`;
}

/**
 * A key equal for views that render every object alike, so a change is rendered once per class of subscribers.
 * Given the schema, it is normalized further: the file base counts only with a binary field rendered, the owner
 * only with an owner-only field rendered, and a selection of every member is no selection.
 */
export function liveViewKey(view: LiveView, s?: CompiledSchema): string {
  let { fileBase, owner, only } = view;
  if (s) {
    const rendered = planOf(s).fields.filter((m) => only === null || only.has(m.name));
    if (!rendered.some((m) => m.def.type === "binary")) fileBase = null;
    if (!rendered.some((m) => m.def.visibility === "owner")) owner = "all";
    const all = [...planOf(s).fields.map((m) => m.name), "createddate", "lastmoddate", "sm_owner"];
    if (only !== null && all.every((n) => only!.has(n))) only = null;
    else if (only !== null) only = new Set(all.filter((n) => only!.has(n)));
  }
  const who = typeof owner === "string" ? owner : [owner.owner, owner.self];
  return JSON.stringify([fileBase, who, only === null ? null : [...only].sort()]);
}
