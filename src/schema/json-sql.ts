// SQL expressions that render stored objects as the API's JSON inside SQLite, so reads never decode rows into
// JavaScript objects and re-serialize them. A field whose value is NULL is left out of the object
// (docs/api/README.md#null-fields-are-omitted): each member is `,"name":<value>` text that is NULL when the field
// is, and concat() skips NULLs, all in C (docs/decisions/datastore.md has the measurements against json_object
// and json_patch). Pure string building.

import type { InValue } from "@libsql/core/api";
import { q } from "../db/sql.ts";
import type { FieldDef } from "./definition.ts";
import { columnsOf } from "./layout.ts";

/** Members per concat() call (two arguments each): SQLite before 3.48 caps function arguments at 127. */
const MEMBERS_PER_CALL = 60;

const lit = (s: string) => `'${s.replaceAll("'", "''")}'`;

/**
 * How floats become JSON text: "native" lets SQLite write them (3.47 and later write the shortest digits that
 * read back exactly); "digits17" writes 17 significant digits with printf, for an SQLite that writes only 15
 * (a libSQL server on 3.45), so every stored float still reads back as the same number.
 */
export type FloatStyle = "native" | "digits17";

/** A float column as JSON number text (NULL stays NULL). */
function floatJson(c: string, floats: FloatStyle): string {
  return floats === "native" ? `json_quote(${c})` : `CASE WHEN typeof(${c}) = 'real' THEN printf('%!.17g', ${c}) ELSE json_quote(${c}) END`;
}

/** Bound values of a rendering, in the order of its placeholders. */
type Slot = "fileBase" | "owner" | "self" | { value: InValue };

/**
 * Who an object is rendered for. `fileBase` is put before stored file paths (`/_files/...`) so that a link carries
 * the base of the request being answered (or --public-url), never one stored from another request; null leaves
 * paths as stored. `owner` decides the fields declared `"visibility": "owner"`: shown ("all": the private key,
 * the server, admins, custom code), left out ("none"), or shown on the rows this user owns (its `sm_owner`, and in
 * its own user schema its own object when `self` is set).
 */
export interface Viewer {
  fileBase: string | null;
  owner: "all" | "none" | { owner: string; self: string | null };
}

/** A rendering's SQL and the placeholders it holds (bindViewer turns them into arguments). */
export interface ObjectSql {
  sql: string;
  slots: readonly Slot[];
}

interface Member {
  pieces: string[];
  slots: Slot[];
}

/** A stored file path (what binary fields hold for files stored here) starts with this. */
export const FILES_PATH = "/_files/";

/**
 * concat() arguments rendering one member as `,"name":<value>`, or only NULLs when the field is NULL. Values go
 * through json_quote (strings escaped, floats with json_object's round-trip digits, any stored type valid JSON),
 * json() (stored arrays) or json_object (geopoints); `col` qualifies a column name (e.g. with a table alias).
 */
function memberSql(
  name: string,
  def: FieldDef,
  col: (c: string) => string,
  floats: FloatStyle,
  files: boolean,
  distance?: ObjectSql,
): Member {
  const [c0, c1] = columnsOf(name, def).map(col);
  const prefix = `,${JSON.stringify(name)}:`;
  const guarded = (isNull: string, value: string, slots: Slot[] = []): Member => ({
    pieces: [`CASE WHEN ${isNull} THEN NULL ELSE ${lit(prefix)} END`, value],
    slots,
  });
  switch (def.type) {
    case "boolean":
      return { pieces: [`CASE ${c0} WHEN 1 THEN ${lit(`${prefix}true`)} WHEN 0 THEN ${lit(`${prefix}false`)} END`], slots: [] };
    case "array":
      return guarded(`${c0} IS NULL`, `json(${c0})`);
    case "geopoint": {
      const isNull = `${c0} IS NULL OR ${c1} IS NULL`;
      const dist = distance === undefined ? "" : `, 'distance', ${distance.sql}`;
      const [lat, lon] = floats === "native" ? [c0, c1] : [`json(${floatJson(c0!, floats)})`, `json(${floatJson(c1!, floats)})`];
      return guarded(isNull, `CASE WHEN ${isNull} THEN NULL ELSE json_object('lat', ${lat}, 'lon', ${lon}${dist}) END`, [
        ...(distance?.slots ?? []),
      ]);
    }
    case "binary":
      // Files stored here hold their path; the viewer's base makes it a link. Other values (imported URLs) stay.
      // (json_quote(NULL) is the text null, so NULL is tested first.)
      if (files)
        return guarded(
          `${c0} IS NULL`,
          `CASE WHEN ${c0} IS NULL THEN NULL WHEN substr(${c0}, 1, ${FILES_PATH.length}) = ${lit(FILES_PATH)} THEN json_quote(? || ${c0}) ELSE json_quote(${c0}) END`,
          ["fileBase"],
        );
      return guarded(`${c0} IS NULL`, `CASE WHEN ${c0} IS NULL THEN NULL ELSE json_quote(${c0}) END`);
    default:
      if (def.type === "relationship" && def.many) return guarded(`${c0} IS NULL`, `json(${c0})`);
      return guarded(
        `${c0} IS NULL`,
        `CASE WHEN ${c0} IS NULL THEN NULL ELSE ${def.type === "float" ? floatJson(c0!, floats) : `json_quote(${c0})`} END`,
      );
  }
}

interface RenderOptions {
  /** Only these fields (the key is always rendered); null or absent for every field. */
  only?: ReadonlySet<string> | null;
  /** A near query: this geopoint field also carries `distance`, computed by this SQL expression. */
  distance?: { field: string; sql: string; args?: readonly InValue[] };
  /** How floats are written (default "native"). */
  floats?: FloatStyle;
  /** Who reads (absent: file paths as stored and every field shown, for statements whose rows are not answered). */
  viewer?: Viewer;
}

/**
 * The object: key, fields (never passwords), createddate, lastmoddate, sm_owner, each only when not NULL;
 * optionally narrowed, and shaped for a viewer. The key is never NULL (TEXT PRIMARY KEY NOT NULL), so every other
 * member starts with ",". The SQL holds a placeholder per slot, in slot order.
 */
export function objectJsonSql(
  pk: string,
  fields: Iterable<[string, FieldDef]>,
  qualifier: string | null,
  opts: RenderOptions = {},
): ObjectSql {
  const col = qualifier === null ? q : (c: string) => `${qualifier}.${q(c)}`;
  const only = opts.only ?? null;
  const floats = opts.floats ?? "native";
  const viewer = opts.viewer;
  const files = viewer !== undefined && viewer.fileBase !== null;
  const want = (name: string) => only === null || only.has(name);
  const members: Member[] = [];
  for (const [name, def] of fields) {
    if (def.type === "password" || !want(name)) continue;
    const hidden = def.visibility === "owner" && viewer !== undefined && viewer.owner !== "all";
    if (hidden && viewer!.owner === "none") continue;
    const distance =
      opts.distance?.field === name ? { sql: opts.distance.sql, slots: (opts.distance.args ?? []).map((value) => ({ value })) } : undefined;
    const m = memberSql(name, def, col, floats, files, distance);
    if (hidden) {
      // Shown on the viewer's own rows only: one condition around the whole member (concat of NULLs is '').
      const self = (viewer!.owner as { self: string | null }).self !== null;
      const cond = `${col("sm_owner")} = ?${self ? ` OR ${col(pk)} = ?` : ""}`;
      members.push({
        pieces: [`CASE WHEN ${cond} THEN concat('', ${m.pieces.join(", ")}) END`],
        slots: ["owner", ...(self ? (["self"] as Slot[]) : []), ...m.slots],
      });
    } else members.push(m);
  }
  // createddate and lastmoddate are INTEGER NOT NULL: concat() writes their digits as they are.
  for (const date of ["createddate", "lastmoddate"]) if (want(date)) members.push({ pieces: [lit(`,"${date}":`), col(date)], slots: [] });
  if (want("sm_owner")) members.push(memberSql("sm_owner", { type: "string" }, col, floats, false));
  const head = [lit(`{${JSON.stringify(pk)}:`), `json_quote(${col(pk)})`];
  const slots = members.flatMap((m) => m.slots);
  if (members.length <= MEMBERS_PER_CALL)
    return { sql: `concat(${[...head, ...members.flatMap((m) => m.pieces), "'}'"].join(", ")})`, slots };
  // Each chunk starts with a constant (''): SQLite (3.54.1 too) keeps a call's arguments in reusable temporary
  // registers when none of its first 32 arguments is constant, yet still codes later constant arguments once at
  // start-up into those registers, where other calls overwrite them (a ',"createddate":' came out as ',"f140":').
  const chunks: string[] = [];
  for (let i = 0; i < members.length; i += MEMBERS_PER_CALL)
    chunks.push(
      `concat('', ${members
        .slice(i, i + MEMBERS_PER_CALL)
        .flatMap((m) => m.pieces)
        .join(", ")})`,
    );
  return { sql: `concat(${[...head, ...chunks, "'}'"].join(", ")})`, slots };
}

const NO_ARGS: InValue[] = [];

/** The arguments of a rendering's placeholders for a viewer. */
export function bindViewer(slots: readonly Slot[], viewer: Viewer | undefined): InValue[] {
  if (slots.length === 0) return NO_ARGS;
  return slots.map((slot) => {
    if (typeof slot === "object") return slot.value;
    if (slot === "fileBase") return viewer?.fileBase ?? "";
    const o = viewer?.owner;
    if (typeof o !== "object") throw new Error("an owner-only field was rendered without its viewer");
    return slot === "owner" ? o.owner : o.self;
  });
}
