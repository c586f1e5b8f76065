// Executes migration plans against an environment database inside one write transaction, and records the
// resulting physical layout in the same transaction (so the layout always matches the tables).

import type { Client, Transaction } from "@libsql/core/api";
import { q } from "../db/sql.ts";
import { convertValue, decodeValue, encodeValue, type Json } from "./values.ts";
import type { FieldDef, SchemaDef } from "./definition.ts";
import {
  LAYOUT_TABLE,
  addColumnSql,
  columnsOf,
  createFileTriggersSql,
  createGeoIndexSql,
  createIndexSql,
  createTableSql,
  dropFileTriggersSql,
  dropGeoIndexSql,
  dropIndexSql,
  dropUsersSql,
  geoTableName,
  tableName,
  userTriggersSql,
} from "./layout.ts";
import type { Plan } from "./plan.ts";
import { STREAMS_EXIST_SQL, changeLoggingSql, dropChangeTriggersSql } from "./change-log.ts";
import { detectFloatStyle } from "./float-style.ts";
import { READ_HOOK_TARGETS_SQL, dropHookTriggersSql, hookTriggersForSql, targetsOf } from "./hook-queue-sql.ts";

const UPDATE_CHUNK = 500;

export const LAYOUT_DDL = `CREATE TABLE IF NOT EXISTS ${q(LAYOUT_TABLE)} (name TEXT PRIMARY KEY, definition TEXT NOT NULL) STRICT`;

/** Read the recorded layouts of an environment database. */
export async function readLayouts(client: Pick<Client, "execute">): Promise<Map<string, SchemaDef>> {
  const rs = await client.execute(`SELECT name, definition FROM ${q(LAYOUT_TABLE)}`);
  return new Map(rs.rows.map((r) => [r.name as string, JSON.parse(r.definition as string) as SchemaDef]));
}

/**
 * Rebuild the triggers that name tables and fields for the tables the database holds now: the user-deletion
 * triggers (layout.ts, userTriggersSql) and each table's change-log triggers (change-log.ts).
 */
export async function rebuildTriggers(client: Pick<Client, "execute">): Promise<void> {
  for (const sql of await triggersSql(client)) await client.execute(sql);
}

/** The same in one write transaction of its own (at start, where several nodes may open the store at once). */
export async function rebuildTriggersAtomically(client: Client): Promise<void> {
  await client.batch(await triggersSql(client), "write");
}

async function triggersSql(client: Pick<Client, "execute">): Promise<string[]> {
  const layouts = [...(await readLayouts(client)).values()];
  return [...userTriggersSql(layouts), ...(await changeLogging(client, layouts)), ...(await hookTriggers(client, layouts))];
}

/**
 * The after-hook triggers for the tables the database holds and the targets its `_burrow_hook_targets` names
 * (src/schema/hook-queue-sql.ts); tables without targets get theirs dropped. A database made before the queue
 * existed has no targets table: nothing to do.
 */
export async function hookTriggers(client: Pick<Client, "execute">, layouts?: readonly SchemaDef[]): Promise<string[]> {
  let rows: { schema: unknown; event: unknown }[];
  try {
    rows = (await client.execute(READ_HOOK_TARGETS_SQL)).rows as unknown as { schema: unknown; event: unknown }[];
  } catch {
    return [];
  }
  const all = layouts ?? [...(await readLayouts(client)).values()];
  return hookTriggersForSql(all, await detectFloatStyle(client), targetsOf(rows));
}

/**
 * The change-log triggers for the tables the database holds, on when some live stream exists (`on` overrides it),
 * off otherwise (src/schema/change-log.ts). Run them in the transaction that changes whether streams exist.
 */
export async function changeLogging(client: Pick<Client, "execute">, layouts?: readonly SchemaDef[], on?: boolean): Promise<string[]> {
  const all = layouts ?? [...(await readLayouts(client)).values()];
  const wanted = on ?? Number((await client.execute(STREAMS_EXIST_SQL)).rows[0]!.on_) === 1;
  return changeLoggingSql(all, await detectFloatStyle(client), wanted);
}

/** Apply every plan atomically: either all of them take effect, or none. */
export async function applyPlans(client: Client, plans: readonly Plan[], now = Date.now()): Promise<void> {
  if (plans.every((p) => p.steps.length === 0 && p.before && JSON.stringify(p.before) === JSON.stringify(p.after))) return;
  const tx = await client.transaction("write");
  try {
    for (const plan of plans) await applyPlan(tx, plan, now);
    // The triggers name tables and relationship fields: rebuilt for the new layouts in the same transaction.
    await rebuildTriggers(tx);
    await tx.commit();
  } finally {
    tx.close();
  }
}

/** Drop a schema's table and layout (development only). A user schema's accounts end with it, as if each were deleted. */
export async function dropSchemaTable(client: Client, name: string): Promise<void> {
  const layouts = await readLayouts(client);
  const layout = layouts.get(name);
  layouts.delete(name);
  const geo = Object.entries(layout?.fields ?? {})
    .filter(([, d]) => d.type === "geopoint")
    .flatMap(([f]) => dropGeoIndexSql(name, f));
  await client.batch(
    [
      ...geo,
      ...(layout?.user ? dropUsersSql(name, [...layouts.values()]) : []),
      // The schema's files go to the trash with it.
      {
        sql: `INSERT OR IGNORE INTO _burrow_trash (key, store, since) SELECT key, store, ? FROM _burrow_files WHERE schema = ?`,
        args: [Date.now(), name],
      },
      { sql: `DELETE FROM _burrow_files WHERE schema = ?`, args: [name] },
      `DROP TABLE IF EXISTS ${q(tableName(name))}`,
      { sql: `DELETE FROM ${q(LAYOUT_TABLE)} WHERE name = ?`, args: [name] },
      // The other user schemas' triggers no longer name the dropped table.
      ...userTriggersSql([...layouts.values()]),
    ],
    "write",
  );
}

async function applyPlan(tx: Transaction, plan: Plan, now: number): Promise<void> {
  const table = q(tableName(plan.schema));
  const run = (sql: string) => tx.execute(sql);
  let existing = new Set<string>();
  if (plan.before) {
    const rs = await tx.execute({ sql: "SELECT name FROM pragma_table_info(?)", args: [tableName(plan.schema)] });
    existing = new Set(rs.rows.map((r) => r.name as string));
  }
  // Indexes that touch a column about to be dropped, renamed or replaced go first; all are recreated at the end.
  const touched = new Set(
    plan.steps.flatMap((s) => ("field" in s && s.kind !== "addField" ? [s.field] : s.kind === "renameKey" ? [s.from] : [])),
  );
  for (const ix of plan.before?.indexes ?? []) if (ix.some((f) => touched.has(f))) await run(dropIndexSql(plan.schema, ix));
  // File triggers name the key and binary columns: they are dropped first and recreated for the new layout; the
  // change-log triggers name every column and are recreated with the others (rebuildTriggers).
  if (plan.before)
    for (const sql of [...dropFileTriggersSql(plan.before), ...dropChangeTriggersSql(plan.schema), ...dropHookTriggersSql(plan.schema)])
      await run(sql);
  // So do the R*Tree and triggers of a geopoint field that changes (its triggers name the columns).
  for (const [f, def] of Object.entries(plan.before?.fields ?? {}))
    if (def.type === "geopoint" && touched.has(f)) for (const sql of dropGeoIndexSql(plan.schema, f)) await run(sql);

  for (const s of plan.steps) {
    switch (s.kind) {
      case "createTable":
        await run(createTableSql(plan.after));
        break;
      case "renameKey":
        await run(`ALTER TABLE ${table} RENAME COLUMN ${q(s.from)} TO ${q(s.to)}`);
        break;
      case "dropIndex":
        await run(dropIndexSql(plan.schema, s.fields));
        break;
      case "dropField":
        for (const c of columnsOf(s.field, s.def)) if (existing.has(c)) await run(`ALTER TABLE ${table} DROP COLUMN ${q(c)}`);
        break;
      case "addField":
        for (const c of columnsOf(s.field, s.def)) if (!existing.has(c)) await run(addColumnSql(plan.schema, c, s.def));
        break;
      case "changeField":
        await replaceColumns(tx, plan.schema, s.field, s.from, s.to, "drop", now);
        break;
      case "retireField":
        await replaceColumns(tx, plan.schema, s.field, s.from, s.to, "retire", now);
        break;
      case "addIndex":
        break; // created below with every index of the new layout
    }
  }
  for (const ix of plan.after.indexes) await run(createIndexSql(plan.after, ix));
  for (const sql of createFileTriggersSql(plan.after)) await run(sql);
  for (const [f, def] of Object.entries(plan.after.fields)) {
    if (def.type !== "geopoint") continue;
    const exists = await tx.execute({ sql: "SELECT 1 FROM sqlite_schema WHERE name = ?", args: [geoTableName(plan.schema, f)] });
    if (exists.rows.length === 0) for (const sql of createGeoIndexSql(plan.schema, f)) await run(sql);
  }
  await tx.execute({
    sql: `INSERT INTO ${q(LAYOUT_TABLE)} (name, definition) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET definition = excluded.definition`,
    args: [plan.schema, JSON.stringify(plan.after)],
  });
}

/**
 * Give a field a new type: new columns are filled with the converted old values, then the old columns are
 * dropped (development) or kept under a retired name (production), and the new ones take the field's name.
 */
async function replaceColumns(
  tx: Transaction,
  schema: string,
  field: string,
  from: FieldDef,
  to: FieldDef,
  old: "drop" | "retire",
  now: number,
) {
  const table = q(tableName(schema));
  let oldCols = columnsOf(field, from);
  const newCols = columnsOf(field, to);
  if (old === "retire") {
    const retired = oldCols.map((c) => `${c}$retired$${now}`);
    for (let i = 0; i < oldCols.length; i++) await tx.execute(`ALTER TABLE ${table} RENAME COLUMN ${q(oldCols[i]!)} TO ${q(retired[i]!)}`);
    oldCols = retired;
  }
  const tmpCols = newCols.map((c) => `${c}$new`);
  for (const c of tmpCols) await tx.execute(addColumnSql(schema, c, to));
  const convertible = from.type !== "password" && to.type !== "password";
  if (convertible) {
    const rs = await tx.execute(`SELECT rowid AS r, ${oldCols.map(q).join(", ")} FROM ${table} WHERE ${q(oldCols[0]!)} IS NOT NULL`);
    const updates = [];
    for (const row of rs.rows) {
      let value: Json;
      try {
        value = convertValue(
          decodeValue(
            from,
            oldCols.map((c) => row[c] ?? null),
          ),
          to,
        );
      } catch {
        value = null;
      }
      if (value === null) continue;
      updates.push({
        sql: `UPDATE ${table} SET ${tmpCols.map((c) => `${q(c)} = ?`).join(", ")} WHERE rowid = ?`,
        args: [...encodeValue(to, value), row.r!],
      });
    }
    for (let i = 0; i < updates.length; i += UPDATE_CHUNK) await tx.batch(updates.slice(i, i + UPDATE_CHUNK));
  }
  if (old === "drop") for (const c of oldCols) await tx.execute(`ALTER TABLE ${table} DROP COLUMN ${q(c)}`);
  for (let i = 0; i < newCols.length; i++) await tx.execute(`ALTER TABLE ${table} RENAME COLUMN ${q(tmpCols[i]!)} TO ${q(newCols[i]!)}`);
}
