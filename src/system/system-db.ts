// system.db: admins (with roles), API keys, settings, schema definitions and custom code per environment and
// version, deploy history, logs.
// Versioned migrations run at open; `epoch` counts configuration changes so every process can see them.

import type { Client } from "@libsql/core/api";

const MIGRATIONS: string[][] = [
  [
    `CREATE TABLE meta (key TEXT PRIMARY KEY, value ANY) STRICT`,
    `INSERT INTO meta (key, value) VALUES ('epoch', 0)`,
    `CREATE TABLE api_keys (env TEXT PRIMARY KEY, public_key TEXT NOT NULL UNIQUE, private_key TEXT NOT NULL UNIQUE, created INTEGER NOT NULL) STRICT`,
    `CREATE TABLE admins (id TEXT PRIMARY KEY, email TEXT NOT NULL UNIQUE, password_hash TEXT NOT NULL, created INTEGER NOT NULL, updated INTEGER NOT NULL) STRICT`,
    `CREATE TABLE admin_tokens (token_hash TEXT PRIMARY KEY, admin_id TEXT NOT NULL, expires INTEGER NOT NULL) STRICT`,
    `CREATE TABLE schema_defs (env TEXT NOT NULL, version INTEGER NOT NULL, name TEXT NOT NULL, definition TEXT NOT NULL, updated INTEGER NOT NULL, PRIMARY KEY (env, version, name)) STRICT`,
    `CREATE TABLE deploys (id INTEGER PRIMARY KEY, version INTEGER NOT NULL, created INTEGER NOT NULL, admin TEXT, summary TEXT NOT NULL) STRICT`,
    `CREATE TABLE settings (env TEXT PRIMARY KEY, doc TEXT NOT NULL, updated INTEGER NOT NULL) STRICT`,
  ],
  [
    // Custom code per environment and version (development is version 0): the source as uploaded, the JavaScript
    // the sandbox runs, and the methods it exports.
    `CREATE TABLE code_bundles (env TEXT NOT NULL, version INTEGER NOT NULL, source TEXT NOT NULL, js TEXT NOT NULL, methods TEXT NOT NULL, updated INTEGER NOT NULL, PRIMARY KEY (env, version)) STRICT`,
    // Log lines of custom code (and later other sources), kept per environment and bounded.
    `CREATE TABLE logs (id INTEGER PRIMARY KEY, env TEXT NOT NULL, source TEXT NOT NULL, level TEXT NOT NULL, message TEXT NOT NULL, details TEXT, created INTEGER NOT NULL) STRICT`,
    `CREATE INDEX logs_by_source ON logs (env, source, id)`,
  ],
  [
    // Admin roles (src/system/admin-roles.ts): owner, editor or viewer; admins made before roles are owners.
    `ALTER TABLE admins ADD COLUMN role TEXT NOT NULL DEFAULT 'owner'`,
    // An admin's tokens are revoked together (password change, removal).
    `CREATE INDEX admin_tokens_by_admin ON admin_tokens (admin_id)`,
  ],
];

export const BUMP_EPOCH = `UPDATE meta SET value = value + 1 WHERE key = 'epoch'`;

/** Bring system.db to the current schema version (idempotent; safe when two processes start at once). */
export async function migrateSystemDb(client: Client): Promise<void> {
  await client.execute(
    `CREATE TABLE IF NOT EXISTS schema_version (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL) STRICT`,
  );
  for (;;) {
    const rs = await client.execute(`SELECT version FROM schema_version WHERE id = 1`);
    const current = rs.rows.length ? Number(rs.rows[0]!.version) : 0;
    if (current >= MIGRATIONS.length) return;
    try {
      await client.batch(
        [
          ...MIGRATIONS[current]!,
          {
            sql: `INSERT INTO schema_version (id, version) VALUES (1, ?) ON CONFLICT(id) DO UPDATE SET version = excluded.version WHERE version = ?`,
            args: [current + 1, current],
          },
        ],
        "write",
      );
    } catch (e) {
      // Another process may have applied the same migration first; re-read and continue.
      const again = await client.execute(`SELECT version FROM schema_version WHERE id = 1`);
      if (!again.rows.length || Number(again.rows[0]!.version) <= current) throw e;
    }
  }
}

export async function readEpoch(client: Client): Promise<number> {
  const rs = await client.execute(`SELECT value FROM meta WHERE key = 'epoch'`);
  return Number(rs.rows[0]?.value ?? 0);
}
