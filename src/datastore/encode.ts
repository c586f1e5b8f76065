// Turning a request body into column values for one schema (`<field>[inc]` counters, sm_owner for the private
// key, passwords hashed, uploads saved), and the SQL pieces writes share: an update's SET list, the statements a
// new password adds, the password limit of public-key requests. An internal of the datastore.

import type { InStatement, InValue } from "@libsql/core/api";
import { hashPassword } from "../auth/passwords.ts";
import { q } from "../db/sql.ts";
import { type ApiError, badRequest } from "../errors.ts";
import type { Files, SavedFile } from "../files/files.ts";
import { looksLikeUpload, parseUpload, type Upload } from "../files/upload.ts";
import type { CompiledSchema } from "../schema/compiled.ts";
import { AUTO_FIELDS, EMAIL_VERIFIED } from "../schema/definition.ts";
import { UPLOAD, ValueTypeError, describeValue, integerMismatch, keyOf } from "../schema/value-errors.ts";
import { encodeValue, isKeyValue } from "../schema/values.ts";
import type { ApiContext } from "../request-context.ts";
import type { SqlPart } from "./query/compile.ts";

/**
 * Objects carrying a password (each costs an argon2id hash) one request may create without the private key: a
 * batch of 1000 sign-ups would hold the hashing threads for seconds while logins wait.
 */
export const MAX_PASSWORDS_PER_REQUEST = 20;
export const IGNORED_ON_WRITE = new Set<string>(AUTO_FIELDS);
export const INC_RE = /^([a-z][a-z0-9_]{0,63})\[inc\]$/;

export type Mode = "create" | "update";

/** The private key (app) and the server itself (custom code): they may set sm_owner and change passwords. */
export const isTrusted = (ctx: ApiContext) => ctx.principal.kind === "app" || ctx.principal.kind === "system";

/** The legacy wording (old SDKs match it) followed by the precise detail: field, expected type, what was sent. */
export function typeError(field: string, mode: Mode, e: ValueTypeError): ApiError {
  const legacy = mode === "create" ? "has an incompatible type, please check your schema" : "has invalid type, please check your schema";
  return badRequest(`${field} ${legacy} (${e.detail(field)})`);
}

/** A body turned into column values, with the files it uploaded. */
export interface Encoded {
  values: Map<string, InValue[]>;
  /** field -> increment, for `<field>[inc]` (on a new object the counter starts at 0, so it is set to n). */
  incs: Map<string, number>;
  saved: SavedFile[];
  /** Binary fields that were sent back as a plain string (their URL): kept only if unchanged. */
  keepIfSame: Map<string, string>;
  /** sm_owner set by a private-key caller (others cannot set it). */
  owner?: string;
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Column values for the fields a body sets (null and "NULL" clear a field); uploads are saved to `files`. */
export async function encodeBody(
  ctx: ApiContext,
  files: Files,
  s: CompiledSchema,
  body: Record<string, unknown>,
  mode: Mode,
  id?: string,
): Promise<Encoded> {
  const out: Encoded = { values: new Map(), incs: new Map(), saved: [], keepIfSame: new Map() };
  const uploads: [string, Upload][] = [];
  for (const key of Object.keys(body)) {
    const v = body[key];
    const inc = INC_RE.exec(key);
    if (inc) {
      const field = inc[1]!;
      if (s.fields.get(field)?.type !== "integer") throw badRequest(`${key}: [inc] needs an integer field, and "${field}" is not one`);
      if (typeof v !== "number" || !Number.isSafeInteger(v)) throw badRequest(integerMismatch(v).detail(key));
      if (Object.hasOwn(body, field)) throw badRequest(`${key}: "${field}" cannot be set and incremented at once`);
      out.incs.set(field, v);
      continue;
    }
    if (key === s.pk) {
      if (mode === "update" && v !== id) throw badRequest(`${s.pk}: unable to update primary key`);
      if (mode === "create" && !isKeyValue(v)) throw typeError(key, mode, new ValueTypeError(keyOf(), describeValue(v)));
      continue;
    }
    if (key === "sm_owner" && isTrusted(ctx) && v !== undefined) {
      // Only the app (private key) or custom code may set or change sm_owner; OAuth 2.0 callers' values are ignored.
      if (v !== null && (typeof v !== "string" || !/^[a-z][a-z0-9_]{0,63}\/./.test(v) || v.length > 330))
        throw badRequest(`sm_owner must be "<userSchema>/<key>"`);
      out.owner = v === null ? "" : v;
      continue;
    }
    if (IGNORED_ON_WRITE.has(key) || (key === EMAIL_VERIFIED && s.def.user?.verifyEmail)) continue;
    const fc = s.columnsByField.get(key)!;
    if (v === null || v === "NULL") {
      out.values.set(
        key,
        fc.cols.map(() => null),
      );
      continue;
    }
    if (fc.def.type === "relationship" && (isObject(v) || (Array.isArray(v) && v.some(isObject))))
      throw badRequest(`${key} holds a nested object; nested objects need the X-Service-Relations header`);
    if (fc.def.type === "password") {
      if (mode === "update" && !isTrusted(ctx)) throw badRequest(`${key} cannot be changed with PUT; use /${s.name}/resetPassword`);
      if (typeof v !== "string" || v.length === 0 || v.length > 1024)
        throw typeError(key, mode, new ValueTypeError("non-empty string of at most 1024 characters", describeValue(v)));
      out.values.set(key, [await hashPassword(v)]);
      continue;
    }
    if (fc.def.type === "binary") {
      if (typeof v === "string" && looksLikeUpload(v)) uploads.push([key, parseUpload(key, v, files.maxBytes(ctx.env))]);
      else if (typeof v === "string" && mode === "update") out.keepIfSame.set(key, v);
      else
        throw typeError(
          key,
          mode,
          new ValueTypeError(mode === "update" ? `${UPLOAD}, null, or the file's current URL` : UPLOAD, describeValue(v)),
        );
      continue;
    }
    try {
      out.values.set(key, encodeValue(fc.def, v));
    } catch (e) {
      throw e instanceof ValueTypeError ? typeError(key, mode, e) : e;
    }
  }
  if (uploads.length) {
    const results = await Promise.allSettled(uploads.map(([field, u]) => files.save(ctx.env, field, u)));
    for (const r of results) if (r.status === "fulfilled") out.saved.push(r.value);
    const failed = results.find((r) => r.status === "rejected");
    if (failed) {
      await files.discard(ctx.env, out.saved);
      throw (failed as PromiseRejectedResult).reason;
    }
    for (const f of out.saved) out.values.set(f.field, [f.url]);
  }
  return out;
}

/**
 * 400 when a caller without the private key sends more than MAX_PASSWORDS_PER_REQUEST objects carrying a
 * password for `s` in one request (checked before anything is hashed).
 */
export function limitPasswords(ctx: ApiContext, s: CompiledSchema, bodies: readonly unknown[]): void {
  if (!s.passwordField || isTrusted(ctx)) return;
  let n = 0;
  for (const b of bodies) if (isObject(b) && b[s.passwordField] !== undefined && b[s.passwordField] !== null) n++;
  if (n > MAX_PASSWORDS_PER_REQUEST)
    throw badRequest(
      `at most ${MAX_PASSWORDS_PER_REQUEST} ${s.name} objects with a ${s.passwordField} per request with the public key (${n} sent); create more with the private key`,
    );
}

/** The SET list of an update: the encoded values, `<field>[inc]` additions, sm_owner, and a newer lastmoddate. */
/**
 * The SET term that clears `emailverified` when a write gives a user a new email address (the same address again
 * keeps the flag), `newValue` being how the statement names the new address; null when the write sets none. The
 * row's own column is read before the write, in an UPDATE's SET as in an upsert's DO UPDATE.
 */
export function verificationReset(s: CompiledSchema, enc: Encoded, newValue: string): string | null {
  const email = s.def.user?.verifyEmail ? s.def.user.email : undefined;
  if (email === undefined || !enc.values.has(email)) return null;
  return `${q(EMAIL_VERIFIED)} = CASE WHEN t.${q(email)} IS ${newValue} THEN t.${q(EMAIL_VERIFIED)} ELSE NULL END`;
}

export function setClause(s: CompiledSchema, enc: Encoded): SqlPart {
  const sets: string[] = [];
  const args: InValue[] = [];
  for (const fc of s.fieldColumns) {
    const v = enc.values.get(fc.name);
    if (!v) continue;
    fc.cols.forEach((c, i) => {
      sets.push(`${q(c)} = ?`);
      args.push(v[i]!);
    });
  }
  for (const [f, by] of enc.incs) {
    sets.push(`${q(f)} = COALESCE(${q(f)}, 0) + ?`);
    args.push(by);
  }
  if (enc.owner !== undefined) {
    sets.push(`"sm_owner" = ?`);
    args.push(enc.owner || null);
  }
  const reset = verificationReset(s, enc, "?");
  if (reset) {
    sets.push(reset);
    args.push(enc.values.get(s.def.user!.email!)![0]!);
  }
  sets.push(`"lastmoddate" = max("lastmoddate" + 1, ?)`);
  args.push(Date.now());
  return { sql: sets.join(", "), args };
}

/**
 * A new password ends the user's sessions and any temporary password, in the update's transaction: each statement
 * acts only when the row holds the new hash (salted, so it is there only if this update wrote it).
 */
export function passwordChangedSql(s: CompiledSchema, id: string, hash: string): InStatement[] {
  const written = `EXISTS (SELECT 1 FROM ${s.table} WHERE ${q(s.pk)} = ? AND ${q(s.passwordField!)} = ?)`;
  return ["_burrow_sessions", "_burrow_temp_passwords"].map((table) => ({
    sql: `DELETE FROM ${table} WHERE user_schema = ? AND username = ? AND ${written}`,
    args: [s.name, id, id, hash],
  }));
}

/** Whether an update set a binary field (replaced or cleared files go to the trash, to be drained). */
export function touchesFiles(s: CompiledSchema, enc: Encoded): boolean {
  return enc.values.size > 0 && s.fieldColumns.some((fc) => fc.def.type === "binary" && enc.values.has(fc.name));
}
