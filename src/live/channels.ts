// Channel messages (custom code's live.publish): ephemeral, never in the change log. `user:<username>` reaches that
// user's streams, `public:<name>` the streams that joined it. On one node a message goes straight to the hub; when
// several nodes share a libSQL store it is written to a short-lived table that every node tails (kept a minute).

import type { Client } from "@libsql/core/api";
import { badRequest } from "../errors.ts";

export const MESSAGES_DDL = [
  `CREATE TABLE IF NOT EXISTS _burrow_live_messages (id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, channel TEXT NOT NULL, data TEXT NOT NULL) STRICT`,
];

const CHANNEL_RE = /^(user:[^\s]{1,256}|public:[A-Za-z0-9_.-]{1,64})$/;
/** The largest message, as JSON text. */
export const MAX_MESSAGE_BYTES = 64 * 1024;
const KEEP_MS = 60_000;

/** 400 unless `channel` is `user:<username>` or `public:<name>`. */
export function checkChannel(channel: unknown): string {
  if (typeof channel !== "string" || !CHANNEL_RE.test(channel))
    throw badRequest("a channel is user:<username> or public:<name> (letters, digits, _ . -, at most 64)");
  return channel;
}

/** A channel a stream may join (user channels are received by that user's streams without joining). */
export function checkJoinable(channel: string): string {
  if (!checkChannel(channel).startsWith("public:"))
    throw badRequest("only public:<name> channels are joined; user:<username> reaches that user's streams");
  return channel;
}

/** The message's data as JSON text; 400 for what JSON cannot carry or past the size limit. */
export function messageData(data: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(data ?? null);
  } catch {
    text = undefined;
  }
  if (text === undefined) throw badRequest("the message data must be JSON");
  if (Buffer.byteLength(text) > MAX_MESSAGE_BYTES) throw badRequest(`a message is at most ${MAX_MESSAGE_BYTES} bytes of JSON`);
  return text;
}

/** Messages other nodes wrote to the shared table after `after`. */
export async function readMessages(db: Pick<Client, "execute">, after: number): Promise<{ id: number; channel: string; data: string }[]> {
  const rs = await db.execute({
    sql: `SELECT id, channel, data FROM _burrow_live_messages WHERE id > ? ORDER BY id LIMIT 1000`,
    args: [after],
  });
  return rs.rows.map((r) => ({ id: Number(r.id), channel: r.channel as string, data: r.data as string }));
}

export async function lastMessageId(db: Pick<Client, "execute">): Promise<number> {
  const rs = await db.execute(`SELECT coalesce(max(id), 0) AS m FROM _burrow_live_messages`);
  return Number(rs.rows[0]!.m);
}

/** Write a message for every node (and drop those older than a minute). */
export async function writeMessage(db: Client, channel: string, data: string, now = Date.now()): Promise<void> {
  await db.batch(
    [
      { sql: `INSERT INTO _burrow_live_messages (at, channel, data) VALUES (?, ?, ?)`, args: [now, channel, data] },
      { sql: `DELETE FROM _burrow_live_messages WHERE at < ?`, args: [now - KEEP_MS] },
    ],
    "write",
  );
}
