// API keys per environment: generated on first start, pinned by BURROW_*_KEY variables, looked up per request.

import type { Client } from "@libsql/core/api";
import { BUMP_EPOCH } from "./system-db.ts";
import { ENVIRONMENTS, type EnvName } from "./environments.ts";

interface KeyPair {
  publicKey: string;
  privateKey: string;
}
export type KeySet = Record<EnvName, KeyPair>;

function generateKey(): string {
  return crypto.randomUUID();
}

/** Make sure both environments have keys; pinned values replace stored ones. Returns the key set. */
export async function ensureKeys(client: Client, pinned: Record<EnvName, Partial<KeyPair>>): Promise<KeySet> {
  const current = await readKeys(client);
  const want = {} as KeySet;
  let changed = false;
  for (const env of ENVIRONMENTS) {
    const have = current[env];
    want[env] = {
      publicKey: pinned[env].publicKey ?? have?.publicKey ?? generateKey(),
      privateKey: pinned[env].privateKey ?? have?.privateKey ?? generateKey(),
    };
    changed ||= !have || have.publicKey !== want[env].publicKey || have.privateKey !== want[env].privateKey;
  }
  if (!changed) return want;
  const all = ENVIRONMENTS.flatMap((e) => [want[e].publicKey, want[e].privateKey]);
  if (new Set(all).size !== all.length) throw new Error("a pinned API key equals another key in use; every key must be distinct");
  await client.batch(
    [
      "DELETE FROM api_keys",
      ...ENVIRONMENTS.map((env) => ({
        sql: `INSERT INTO api_keys (env, public_key, private_key, created) VALUES (?, ?, ?, ?)`,
        args: [env, want[env].publicKey, want[env].privateKey, Date.now()],
      })),
      BUMP_EPOCH,
    ],
    "write",
  );
  return want;
}

export async function readKeys(client: Client): Promise<Partial<KeySet>> {
  const rs = await client.execute(`SELECT env, public_key, private_key FROM api_keys`);
  const out: Partial<KeySet> = {};
  for (const r of rs.rows) out[r.env as EnvName] = { publicKey: r.public_key as string, privateKey: r.private_key as string };
  return out;
}
