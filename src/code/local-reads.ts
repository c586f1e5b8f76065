// `data.read` answered on a custom code thread itself, from its own read-only connection to the environment's
// database file (embedded store only). The main thread plans: with its answer to a schema's first read it sends
// the statement it ran (the compiled schema's GET by key) and the catalog generation it was compiled in; the
// thread runs that statement for later reads of the schema while the shared generation counter still holds that
// number (any schema change moves it), so the guest's promise settles in the same turn and the call never waits
// for a hop to the main thread. Anything else - another shape, an unknown schema, a stale plan, an error -
// goes to the main thread as before.

import { Database, type Statement } from "bun:sqlite";
import type { ApiContext } from "../request-context.ts";
import { RawJson } from "./raw-json.ts";
import { Answered } from "./sandbox.ts";
import { isObjectKey, schemaNameOf } from "./services/data-names.ts";

/** How a code thread may answer reads of one schema for calls of one scope (environment and API version). */
export interface ReadPlan {
  scope: string;
  env: string;
  schema: string;
  sql: string;
  generation: number;
}

/** The main thread's side for one call: its scope, and the plan for a read's arguments (null: not locally readable). */
export interface ReadPlanner {
  scope: string;
  plan(args: unknown[]): ReadPlan | null;
}

/** What a code thread needs to read locally: the database file of each environment and the generation counter. */
export interface LocalReadFiles {
  files: Record<string, string>;
  /** Int32 at index 0: the catalog generation whose compiled schemas are current. */
  generation: SharedArrayBuffer;
}

/** The schema and key of `read(schema, id)` with no shape, or null for anything the main thread must judge. */
function readArgs(args: unknown[]): { schema: string; id: string } | null {
  if (args.length < 2 || args.length > 3 || (args.length === 3 && args[2] !== null && args[2] !== undefined)) return null;
  const schema = schemaNameOf(args[0]);
  return schema !== null && isObjectKey(args[1]) ? { schema, id: args[1] } : null;
}

/** The planner of a call made in `ctx` (custom code reads as the server: no permission scope applies). */
export function readPlanner(ctx: ApiContext): ReadPlanner | undefined {
  const set = ctx.schemas;
  const generation = set.generation;
  if (generation === undefined || ctx.principal.kind !== "system") return undefined;
  const scope = `${ctx.env}:${set.version}`;
  return {
    scope,
    plan(args) {
      const a = readArgs(args);
      const s = a && set.schemas.get(a.schema);
      // Objects with file links (made per answer) or owner-only fields are read on the main thread.
      return s?.sameForAll ? { scope, env: ctx.env, schema: s.name, sql: s.sqlGet, generation } : null;
    },
  };
}

interface Connection {
  db: Database;
  begin: Statement;
  commit: Statement;
}

const MAX_PLANS = 1000;
const MAX_STATEMENTS = 200;

export class LocalReads {
  private readonly generation: Int32Array;
  private plans = new Map<string, ReadPlan>();
  private dbs = new Map<string, Connection | null>();
  private statements = new Map<string, Statement>();
  /** Connections inside a read transaction this turn. */
  private open = new Set<Connection>();

  constructor(private readonly where: LocalReadFiles) {
    this.generation = new Int32Array(where.generation);
  }

  learn(plan: ReadPlan): void {
    if (this.plans.size >= MAX_PLANS) this.plans.clear();
    this.plans.set(`${plan.scope}\0${plan.schema}`, plan);
  }

  /** The read answered here, or null when the main thread must answer it. */
  read(scope: string, args: unknown[]): Answered | null {
    const a = readArgs(args);
    if (!a) return null;
    const key = `${scope}\0${a.schema}`;
    const plan = this.plans.get(key);
    if (!plan) return null;
    if (plan.generation !== Atomics.load(this.generation, 0)) {
      this.plans.delete(key);
      return null;
    }
    const stmt = this.statement(plan.env, plan.sql);
    if (!stmt) return null;
    this.snapshot(plan.env);
    try {
      const row = stmt.get(a.id) as { j: string } | null;
      return new Answered(row ? new RawJson(row.j) : null);
    } catch {
      return null;
    }
  }

  /**
   * Reads made in one go (the calls of one message from the main thread, and the jobs they run) share one read
   * transaction, ended by a microtask: one snapshot and one lock of the WAL index instead of one per read. It
   * never outlives the message, so a write whose answer arrives in a later message is always seen.
   */
  private snapshot(env: string): void {
    const c = this.dbs.get(env);
    if (!c || this.open.has(c)) return;
    try {
      c.begin.run();
    } catch {
      return;
    }
    if (this.open.size === 0) queueMicrotask(() => this.endSnapshots());
    this.open.add(c);
  }

  private endSnapshots(): void {
    for (const c of this.open) {
      try {
        c.commit.run();
      } catch {
        // nothing to end (the connection was closed)
      }
    }
    this.open.clear();
  }

  private statement(env: string, sql: string): Statement | null {
    const key = `${env}\0${sql}`;
    let stmt = this.statements.get(key);
    if (stmt) return stmt;
    const c = this.connection(env);
    if (!c) return null;
    try {
      stmt = c.db.prepare(sql);
    } catch {
      return null;
    }
    if (this.statements.size >= MAX_STATEMENTS) {
      for (const s of this.statements.values()) s.finalize();
      this.statements.clear();
    }
    this.statements.set(key, stmt);
    return stmt;
  }

  /** The environment's read-only connection, opened on first use (null when it cannot be: reads go to the main thread). */
  private connection(env: string): Connection | null {
    let c = this.dbs.get(env);
    if (c !== undefined) return c;
    const file = this.where.files[env];
    c = null;
    if (file) {
      try {
        const db = new Database(file, { readonly: true, strict: true });
        db.run("PRAGMA busy_timeout=5000");
        c = { db, begin: db.prepare("BEGIN"), commit: db.prepare("COMMIT") };
      } catch {
        c = null;
      }
    }
    this.dbs.set(env, c);
    return c;
  }

  close(): void {
    this.endSnapshots();
    for (const s of this.statements.values()) s.finalize();
    this.statements.clear();
    for (const c of this.dbs.values()) {
      c?.begin.finalize();
      c?.commit.finalize();
      c?.db.close();
    }
    this.dbs.clear();
  }
}
