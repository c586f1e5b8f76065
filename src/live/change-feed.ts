// Reading an environment's change log (src/schema/change-log.ts): rows after an id in order, the ids it spans now,
// pruning past the retention. The log is the one source of live events: a node tails it, a reconnecting stream
// replays it.

import type { Client } from "@libsql/core/api";
import { CHANGES_TABLE, type ChangeKind } from "../schema/change-log.ts";

export interface Change {
  id: number;
  at: number;
  kind: ChangeKind;
  schema: string | null;
  object: string | null;
  /** JSON text: the object before (update, delete) or a stream's state before (stream). */
  before: string | null;
  /** JSON text: the object after (create, update) or a stream's state after (stream). */
  after: string | null;
}

type Db = Pick<Client, "execute">;

const toChange = (r: Record<string, unknown>): Change => ({
  id: Number(r.id),
  at: Number(r.at),
  kind: r.kind as ChangeKind,
  schema: (r.schema as string | null) ?? null,
  object: (r.object as string | null) ?? null,
  before: (r.before as string | null) ?? null,
  after: (r.after as string | null) ?? null,
});

/** Up to `limit` changes with an id above `after` (and at most `upTo`), in id order. */
export async function readChanges(db: Db, after: number, limit: number, upTo = Number.MAX_SAFE_INTEGER): Promise<Change[]> {
  const rs = await db.execute({
    sql: `SELECT id, at, kind, schema, object, before, after FROM ${CHANGES_TABLE} WHERE id > ? AND id <= ? ORDER BY id LIMIT ?`,
    args: [after, upTo, limit],
  });
  return rs.rows.map((r) => toChange(r as unknown as Record<string, unknown>));
}

/** What one stream needs of the log: changes to these schemas, its own state changes and session end, resets. */
export interface StreamFilter {
  schemas: readonly string[];
  stream: string;
  family: string | null;
}

/** readChanges narrowed to what one stream needs (a replay): the database skips the rest without handing it over. */
export async function readChangesFor(db: Db, after: number, limit: number, upTo: number, f: StreamFilter): Promise<Change[]> {
  const schemas = f.schemas.length ? `schema IN (${f.schemas.map(() => "?").join(", ")}) OR ` : "";
  const rs = await db.execute({
    sql: `SELECT id, at, kind, schema, object, before, after FROM ${CHANGES_TABLE} WHERE id > ? AND id <= ? AND (${schemas}kind = 'reset' OR (kind = 'stream' AND object = ?) OR (kind = 'session' AND object = ?)) ORDER BY id LIMIT ?`,
    args: [after, upTo, ...f.schemas, f.stream, f.family ?? "", limit],
  });
  return rs.rows.map((r) => toChange(r as unknown as Record<string, unknown>));
}

/** The last id the log gave (its newest row is never pruned) and the oldest id it still holds. */
export async function logBounds(db: Db): Promise<{ latest: number; oldest: number | null }> {
  const rs = await db.execute(`SELECT (SELECT max(id) FROM ${CHANGES_TABLE}) AS latest, (SELECT min(id) FROM ${CHANGES_TABLE}) AS oldest`);
  const r = rs.rows[0]!;
  return { latest: Number(r.latest ?? 0), oldest: r.oldest === null || r.oldest === undefined ? null : Number(r.oldest) };
}

/**
 * Whether a reader that has everything up to `after` can catch up from the log: nothing after it was pruned, and
 * it is not ahead of the log (a restore rewinds the log; such a reader gets a reset).
 */
export function canResume(after: number, bounds: { latest: number; oldest: number | null }): boolean {
  if (after > bounds.latest) return false;
  if (after === bounds.latest) return true;
  return bounds.oldest !== null && bounds.oldest <= after + 1;
}

/** Delete up to `max` changes older than `before` (ms), oldest first, never the newest; how many went. */
export async function pruneChanges(db: Db, before: number, max: number): Promise<number> {
  const rs = await db.execute({
    sql: `DELETE FROM ${CHANGES_TABLE} WHERE id IN (SELECT id FROM ${CHANGES_TABLE} WHERE at < ? AND id < (SELECT max(id) FROM ${CHANGES_TABLE}) ORDER BY id LIMIT ?)`,
    args: [before, max],
  });
  return rs.rowsAffected;
}
