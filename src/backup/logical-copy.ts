// Copies one SQLite database into another statement by statement, for stores whose files cannot be copied (a libSQL
// server): the tables and virtual tables (R*Tree) first, then their rows page by page in key order (rowid, or the
// primary key of a WITHOUT ROWID table, so every page is one index seek), then indexes, views and triggers (after
// the rows, so no trigger fires during the copy). Shadow tables of virtual tables are left to their virtual table,
// SQLite's own tables (sqlite_stat*) are skipped except sqlite_sequence. Integers travel as bigint and floats as
// numbers, so a REAL 2.0 stays REAL and an integer past 2^53 stays exact. Read and write sides are small
// interfaces: a read transaction on the server or a local file, and a write transaction or a local file.

/** Reads rows as arrays of values (integers as bigint, floats as number, blobs as bytes). */
export interface SqlReader {
  rows(sql: string, args?: readonly unknown[]): Promise<unknown[][]>;
}

/** Writes the copy: DDL, then rows in batches of one table. */
export interface SqlWriter {
  exec(sql: string): Promise<void>;
  insert(table: string, columns: readonly string[], rows: readonly unknown[][]): Promise<void>;
}

export interface SchemaObject {
  type: "table" | "virtual" | "index" | "view" | "trigger";
  name: string;
  sql: string;
}

export interface CopyResult {
  tables: number;
  rows: number;
}

/** Rows read per page. */
const PAGE_ROWS = 2000;

export function quoteName(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** The objects to copy, in creation order; `skip` leaves tables (and what belongs to them) out. */
export async function readSchema(from: SqlReader, skip: (table: string) => boolean = () => false): Promise<SchemaObject[]> {
  const kinds = new Map(
    (await from.rows(`SELECT name, type FROM pragma_table_list WHERE schema = 'main'`)).map((r) => [String(r[0]), String(r[1])]),
  );
  const out: SchemaObject[] = [];
  for (const [type, name, table, sql] of await from.rows(
    `SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid`,
  )) {
    const n = String(name);
    if (n.startsWith("sqlite_") || skip(String(table))) continue;
    if (type === "table") {
      const kind = kinds.get(n);
      if (kind === "shadow") continue;
      out.push({ type: kind === "virtual" ? "virtual" : "table", name: n, sql: String(sql) });
    } else if (type === "index" || type === "view" || type === "trigger") out.push({ type, name: n, sql: String(sql) });
  }
  return out;
}

interface TablePlan {
  name: string;
  /** The columns written (hidden and generated columns are not). */
  columns: string[];
  /** The key the pages follow: a rowid alias, or a WITHOUT ROWID table's primary key. */
  key: string[];
  /** Whether the key is the rowid (read and written with the row, so R*Tree ids and rowids stay). */
  rowid: boolean;
}

async function planTable(from: SqlReader, t: SchemaObject): Promise<TablePlan> {
  const info = await from.rows(`SELECT name, pk, hidden FROM pragma_table_xinfo(?)`, [t.name]);
  const columns = info.filter((r) => Number(r[2]) === 0).map((r) => String(r[0]));
  const withoutRowid =
    t.type === "table" &&
    Number((await from.rows(`SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = ?`, [t.name]))[0]?.[0] ?? 0) === 1;
  if (withoutRowid) {
    const pk = info
      .filter((r) => Number(r[1]) > 0)
      .sort((a, b) => Number(a[1]) - Number(b[1]))
      .map((r) => String(r[0]));
    return { name: t.name, columns, key: pk, rowid: false };
  }
  const taken = new Set(columns.map((c) => c.toLowerCase()));
  const alias = ["rowid", "_rowid_", "oid"].find((a) => !taken.has(a));
  if (!alias) throw new Error(`table ${t.name} has columns named rowid, _rowid_ and oid: its rows cannot be copied in order`);
  // A virtual table's rows are written by its columns alone (an R*Tree's first column is its rowid).
  return { name: t.name, columns, key: [alias], rowid: t.type === "table" };
}

/** How many rows the tables hold (for progress). */
export async function countRows(from: SqlReader, schema: readonly SchemaObject[]): Promise<number> {
  let n = 0;
  for (const t of schema)
    if (t.type === "table" || t.type === "virtual") n += Number((await from.rows(`SELECT count(*) FROM ${quoteName(t.name)}`))[0]![0]);
  return n;
}

async function copyRows(from: SqlReader, to: SqlWriter, plan: TablePlan, progress: (rows: number) => void): Promise<number> {
  const keys = plan.key.map(quoteName);
  const cols = plan.columns.map(quoteName);
  const select = [...keys, ...cols].join(", ");
  const order = keys.join(", ");
  const written = plan.rowid ? [plan.key[0]!, ...plan.columns] : plan.columns;
  const skipKeys = plan.rowid ? 0 : keys.length;
  const base = `SELECT ${select} FROM ${quoteName(plan.name)}`;
  const after = `${base} WHERE (${order}) > (${keys.map(() => "?").join(", ")}) ORDER BY ${order} LIMIT ${PAGE_ROWS}`;
  let last: unknown[] | null = null;
  let total = 0;
  for (;;) {
    const page: unknown[][] = last ? await from.rows(after, last) : await from.rows(`${base} ORDER BY ${order} LIMIT ${PAGE_ROWS}`);
    if (page.length === 0) return total;
    await to.insert(plan.name, written, skipKeys ? page.map((r) => r.slice(skipKeys)) : page);
    total += page.length;
    progress(page.length);
    if (page.length < PAGE_ROWS) return total;
    last = page[page.length - 1]!.slice(0, keys.length);
  }
}

/** Copies the database `from` into the empty database `to`. */
export async function copyDatabase(
  from: SqlReader,
  to: SqlWriter,
  opts: { skip?: (table: string) => boolean; progress?: (rows: number) => void; schema?: SchemaObject[] } = {},
): Promise<CopyResult> {
  const schema = opts.schema ?? (await readSchema(from, opts.skip));
  const progress = opts.progress ?? (() => {});
  const tables = schema.filter((o) => o.type === "table" || o.type === "virtual");
  let rows = 0;
  for (const t of tables) await to.exec(t.sql);
  for (const t of tables) rows += await copyRows(from, to, await planTable(from, t), progress);
  // AUTOINCREMENT counters, for the tables copied.
  const hasSequence = (await from.rows(`SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_sequence'`))[0]![0];
  if (Number(hasSequence) > 0) {
    const names = new Set(tables.map((t) => t.name));
    const seq = (await from.rows(`SELECT name, seq FROM sqlite_sequence`)).filter((r) => names.has(String(r[0])));
    if (seq.length) {
      await to.exec(`DELETE FROM sqlite_sequence`);
      await to.insert("sqlite_sequence", ["name", "seq"], seq);
    }
  }
  for (const o of schema) if (o.type === "index" || o.type === "view" || o.type === "trigger") await to.exec(o.sql);
  return { tables: tables.length, rows };
}

/** The statements that empty a database before a copy lands in it (views and triggers, then tables; `keep` stays). */
export function dropStatements(schema: readonly SchemaObject[], keep: (table: string) => boolean = () => false): string[] {
  const out: string[] = [];
  for (const o of schema) if (o.type === "view") out.push(`DROP VIEW IF EXISTS ${quoteName(o.name)}`);
  for (const o of schema) if (o.type === "trigger") out.push(`DROP TRIGGER IF EXISTS ${quoteName(o.name)}`);
  for (const o of schema)
    if ((o.type === "table" || o.type === "virtual") && !keep(o.name)) out.push(`DROP TABLE IF EXISTS ${quoteName(o.name)}`);
  return out;
}
