// Sessions on an in-memory SQLite: the live lookup, and why a refused access token is refused (only a token
// whose refresh token still works is "expired"; logged out, rotated away, long expired or unknown is "invalid").

import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { type BunSqliteClient, openBunSqliteClient } from "../../src/db/bun-sqlite-client.ts";
import { SESSIONS_DDL, Sessions } from "../../src/auth/sessions.ts";

let db: BunSqliteClient;
let sessions: Sessions;
beforeEach(async () => {
  db = openBunSqliteClient(":memory:");
  await db.batch(SESSIONS_DDL, "write");
  sessions = new Sessions(db);
});
afterEach(() => db.close());

const family = (token: string) => token.slice(0, 16);
const set = (token: string, columns: string) =>
  db.execute({ sql: `UPDATE _burrow_sessions SET ${columns} WHERE family = ?`, args: [family(token)] });

describe("whyRefused", () => {
  test("an access token past its hour whose refresh token works: expired (refreshing helps)", async () => {
    const tokens = await sessions.issue("user", "ann", false);
    await set(tokens.access_token, "expires = 0");
    expect(await sessions.lookup(tokens.access_token)).toBeNull();
    expect(await sessions.whyRefused(tokens.access_token)).toBe("expired");
  });

  test("the refresh token expired too: invalid", async () => {
    const tokens = await sessions.issue("user", "ann", false);
    await set(tokens.access_token, "expires = 0, refresh_expires = 0");
    expect(await sessions.whyRefused(tokens.access_token)).toBe("invalid");
  });

  test("rotated away by a refresh, or revoked by logout: invalid", async () => {
    const first = await sessions.issue("user", "ann", false);
    const rotated = await sessions.refresh(first.refresh_token);
    expect(rotated).toMatchObject({ schema: "user", username: "ann" });
    expect(await sessions.lookup(first.access_token)).toBeNull();
    expect(await sessions.whyRefused(first.access_token)).toBe("invalid");
    const second = await sessions.issue("user", "ann", false);
    await sessions.revokeFamily(family(second.access_token));
    expect(await sessions.whyRefused(second.access_token)).toBe("invalid");
  });

  test("unknown or malformed tokens: invalid", async () => {
    const tokens = await sessions.issue("user", "ann", false);
    await set(tokens.access_token, "expires = 0");
    expect(await sessions.whyRefused(family(tokens.access_token) + "x".repeat(32))).toBe("invalid");
    for (const token of ["", "short", "A".repeat(48), `${"A".repeat(47)}!`]) expect(await sessions.whyRefused(token)).toBe("invalid");
  });
});
