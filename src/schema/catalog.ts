// The catalog of schema definitions: development (version 0) and every deployed production version.
// It owns every schema change: validation, migration of the environment database, persistence in
// system.db and the compiled sets requests use. Changes are serialized; reads are from memory.

import { detectFloatStyle } from "./float-style.ts";
import type { Client, InStatement } from "@libsql/core/api";
import { type ApiError, badRequest, conflict, notFound } from "../errors.ts";
import { type CompiledSchema, type SchemaSet, compileSchema } from "./compiled.ts";
import type { FloatStyle } from "./json-sql.ts";
import { DEFAULT_SCHEMAS, openSchema } from "./defaults.ts";
import { type FieldDef, type SchemaDef, checkReferences, sameDefinition, validateDefinition } from "./definition.ts";
import { applyPlans, dropSchemaTable, readLayouts } from "./migrate.ts";
import { type Plan, describePlan, planDevelopment, planProduction } from "./plan.ts";
import { openWriteWarnings } from "./warnings.ts";

const MAX_VERSION = 1_000_000;

interface ChangeResult {
  definition: SchemaDef;
  created: boolean;
  changed: boolean;
  changes: string[];
}

/**
 * What the catalog needs to know of custom code (src/code sits above the schema layer, so it is passed in): the
 * method names of development's code, which schemas may not take, and the statements that snapshot development's
 * code into a production version within the deploy's transaction.
 */
export interface CodeHooks {
  developmentMethods(): readonly string[];
  deployStatements(version: number): InStatement[];
  afterDeploy(): Promise<void>;
}

/** The 400 of a schema that would take a custom code method's name. */
export function methodNameTaken(name: string): ApiError {
  return badRequest(`"${name}" is the name of a custom code method; a schema cannot have the same name`);
}

/** The environments' databases whose tables the catalog migrates. */
type EnvDatabases = { development: Client; production: Client };

function toSet(version: number, defs: Map<string, SchemaDef>, floats: FloatStyle, generation: number): SchemaSet {
  return { version, schemas: new Map([...defs].map(([n, d]) => [n, compileSchema(d, floats)])), generation };
}

/** Numbers the loads of every catalog in this process (so a number names one set of compiled schemas). */
let loads = 0;

export class Catalog {
  private dev = new Map<string, SchemaDef>();
  private prod = new Map<number, Map<string, SchemaDef>>();
  private devSet: SchemaSet = { version: 0, schemas: new Map() };
  private prodSets = new Map<number, SchemaSet>();
  private chain: Promise<unknown> = Promise.resolve();
  private code: CodeHooks | null = null;
  private loadListeners: ((generation: number) => void)[] = [];
  private floats: FloatStyle | null = null;

  /**
   * `bumpEpoch` is the system.db statement that records a configuration change (system-db's BUMP_EPOCH); it runs in
   * the batch of every definition write so that other processes reload. Passed in (by services.ts) to keep schema/
   * below system/.
   */
  constructor(
    private readonly system: Client,
    private readonly envs: EnvDatabases,
    private readonly bumpEpoch: InStatement,
  ) {}

  /** Let custom code take part in schema changes and deploys (services.ts wires it). */
  setCodeHooks(hooks: CodeHooks): void {
    this.code = hooks;
  }

  /** Names among `names` that development's code uses as method names. */
  private methodClash(names: Iterable<string>): string | undefined {
    const methods = new Set(this.code?.developmentMethods() ?? []);
    for (const n of names) if (methods.has(n)) return n;
    return undefined;
  }

  /**
   * Run `fn` while no schema change or deploy runs (custom code uploads take it, so a schema cannot be created
   * between their name check and their store).
   */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.locked(fn);
  }

  /** (Re)read every definition from system.db. */
  async load(): Promise<void> {
    const rs = await this.system.execute(`SELECT env, version, name, definition FROM schema_defs ORDER BY env, version, name`);
    const dev = new Map<string, SchemaDef>();
    const prod = new Map<number, Map<string, SchemaDef>>();
    for (const r of rs.rows) {
      const def = JSON.parse(r.definition as string) as SchemaDef;
      if (r.env === "development") dev.set(def.name, def);
      else {
        const v = Number(r.version);
        if (!prod.has(v)) prod.set(v, new Map());
        prod.get(v)!.set(def.name, def);
      }
    }
    const deployed = await this.system.execute(`SELECT DISTINCT version FROM deploys`);
    for (const r of deployed.rows) if (!prod.has(Number(r.version))) prod.set(Number(r.version), new Map());
    this.dev = dev;
    this.prod = prod;
    // Both environments live on one kind of store, so one probe answers for both.
    const floats = (this.floats ??= await detectFloatStyle(this.envs.development));
    const generation = ++loads;
    this.devSet = toSet(0, dev, floats, generation);
    this.prodSets = new Map([...prod].map(([v, defs]) => [v, toSet(v, defs, floats, generation)]));
    for (const l of this.loadListeners) l(generation);
  }

  /** Follow loads: `listener` gets the generation of the sets that are current from now on. */
  onLoad(listener: (generation: number) => void): void {
    this.loadListeners.push(listener);
  }

  development(): SchemaSet {
    return this.devSet;
  }

  production(version: number): SchemaSet | undefined {
    return this.prodSets.get(version);
  }

  /** Warning lines about the newest production version's permissions (empty before the first deploy). */
  productionWarnings(): string[] {
    const latest = this.latestVersion();
    return latest === null ? [] : openWriteWarnings(this.prod.get(latest)!.values());
  }

  /** The newest deployed production version, or null before the first deploy. */
  latestVersion(): number | null {
    let max: number | null = null;
    for (const v of this.prod.keys()) if (max === null || v > max) max = v;
    return max;
  }

  versions(): number[] {
    return [...this.prod.keys()].sort((a, b) => a - b);
  }

  /** Definitions of development (version 0) or of a deployed version; undefined when not deployed. */
  definitions(version = 0): SchemaDef[] | undefined {
    const defs = version === 0 ? this.dev : this.prod.get(version);
    return defs ? [...defs.values()] : undefined;
  }

  private locked<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => {});
    return run;
  }

  /** Put the built-in schemas into development once, on a fresh data directory. */
  async installDefaults(): Promise<void> {
    const rs = await this.system.execute(`SELECT value FROM meta WHERE key = 'defaults_installed'`);
    if (rs.rows.length) return;
    for (const def of DEFAULT_SCHEMAS) await this.put(def, { force: false });
    await this.system.execute(`INSERT OR IGNORE INTO meta (key, value) VALUES ('defaults_installed', 1)`);
  }

  /** Create or replace one development schema, migrating development.db. */
  async put(input: unknown, opts: { name?: string; force?: boolean; dryRun?: boolean }): Promise<ChangeResult> {
    const [r] = await this.putMany([input], opts);
    return r!;
  }

  /**
   * Create or replace several development schemas as one change: references are checked across the whole
   * set, and the migration of development.db is one transaction.
   */
  putMany(inputs: readonly unknown[], opts: { name?: string; force?: boolean; dryRun?: boolean }): Promise<ChangeResult[]> {
    return this.locked(async () => {
      await this.load();
      const defs = inputs.map((i) => validateDefinition(i, opts.name));
      const taken = this.methodClash(defs.map((d) => d.name));
      if (taken !== undefined) throw methodNameTaken(taken);
      const seen = new Set<string>();
      for (const d of defs) {
        if (seen.has(d.name)) throw badRequest(`schema "${d.name}" is defined twice`);
        seen.add(d.name);
      }
      const all = new Map(this.dev);
      for (const d of defs) all.set(d.name, d);
      for (const d of all.values()) checkReferences(d, all);
      const layouts = await readLayouts(this.envs.development);
      const results: ChangeResult[] = [];
      const plans: Plan[] = [];
      const destructive: string[] = [];
      for (const def of defs) {
        const before = this.dev.get(def.name);
        const plan = planDevelopment(layouts.get(def.name) ?? null, def);
        const changed = !before || !sameDefinition(before, def) || plan.steps.length > 0;
        const changes = describePlan(plan);
        if (before && changed && changes.length === 0) changes.push(`~ ${def.name}: definition updated`);
        destructive.push(...plan.destructive);
        if (changed) plans.push(plan);
        results.push({ definition: def, created: !before, changed, changes });
      }
      if (destructive.length && !opts.force) throw destructiveError(destructive);
      if (opts.dryRun || plans.length === 0) return results;
      await applyPlans(this.envs.development, plans);
      await this.saveDevelopment(plans.map((p) => p.after));
      return results;
    });
  }

  /** Delete a development schema and its data. */
  remove(name: string): Promise<void> {
    return this.locked(async () => {
      await this.load();
      if (!this.dev.has(name)) throw notFound(`schema "${name}" does not exist`);
      for (const d of this.dev.values()) {
        if (d.name === name) continue;
        for (const [f, fd] of Object.entries(d.fields))
          if (fd.type === "relationship" && fd.schema === name)
            throw badRequest(`schema "${name}" is used by relationship field "${d.name}.${f}"; change that first`);
      }
      await dropSchemaTable(this.envs.development, name);
      await this.system.batch(
        [{ sql: `DELETE FROM schema_defs WHERE env = 'development' AND name = ?`, args: [name] }, this.bumpEpoch],
        "write",
      );
      await this.load();
    });
  }

  /**
   * Development inference: add fields (and create the schema, and schemas that new relationships point to)
   * so that a write can proceed. Additive only; returns the compiled schema.
   */
  infer(name: string, additions: Record<string, FieldDef>): Promise<CompiledSchema> {
    return this.locked(async () => {
      await this.load();
      const defs: SchemaDef[] = [];
      const cur = this.dev.get(name) ?? openSchema(name);
      const fields = { ...cur.fields };
      for (const [f, fd] of Object.entries(additions)) if (!Object.hasOwn(fields, f)) fields[f] = fd;
      const next = validateDefinition({ ...cur, fields });
      defs.push(next);
      for (const fd of Object.values(additions))
        if (fd.type === "relationship" && fd.schema !== name && !this.dev.has(fd.schema!) && !defs.some((d) => d.name === fd.schema))
          defs.push(openSchema(fd.schema!));
      const all = new Map(this.dev);
      for (const d of defs) all.set(d.name, d);
      for (const d of defs) checkReferences(d, all);
      const taken = this.methodClash(defs.filter((d) => !this.dev.has(d.name)).map((d) => d.name));
      if (taken !== undefined) throw methodNameTaken(taken);
      const layouts = await readLayouts(this.envs.development);
      const plans = defs.map((d) => planDevelopment(layouts.get(d.name) ?? null, d));
      if (plans.some((p) => p.destructive.length)) throw conflict("inference cannot change existing fields");
      await applyPlans(this.envs.development, plans);
      await this.saveDevelopment(defs);
      return this.devSet.schemas.get(name)!;
    });
  }

  /** Snapshot development as production version N and migrate production.db additively. */
  deploy(opts: {
    version?: unknown;
    force?: boolean;
    admin?: string;
    dryRun?: boolean;
  }): Promise<{ version: number; changes: string[]; warnings: string[] }> {
    return this.locked(async () => {
      await this.load();
      const latest = this.latestVersion();
      const version = opts.version ?? (latest ?? 0) + 1;
      if (typeof version !== "number" || !Number.isSafeInteger(version) || version < 1 || version > MAX_VERSION)
        throw badRequest(`version must be an integer from 1 to ${MAX_VERSION}`);
      const clash = this.methodClash(this.dev.keys());
      if (clash !== undefined) throw conflict(`"${clash}" is both a schema and a custom code method; rename one before deploying`);
      const deployed = latest === null ? new Map<string, SchemaDef>() : this.prod.get(latest)!;
      const layouts = await readLayouts(this.envs.production);
      const plans: Plan[] = [];
      const destructive: string[] = [];
      for (const def of this.dev.values()) {
        const plan = planProduction(layouts.get(def.name) ?? null, deployed.get(def.name) ?? null, def);
        plans.push(plan);
        destructive.push(...plan.destructive);
      }
      for (const name of deployed.keys())
        if (!this.dev.has(name)) destructive.push(`remove schema "${name}" from the API (its data stays in production.db)`);
      if (destructive.length && !opts.force) throw destructiveError(destructive);
      const changes = plans.flatMap(describePlan);
      const warnings = openWriteWarnings(this.dev.values());
      if (opts.dryRun) return { version, changes, warnings };
      await applyPlans(this.envs.production, plans);
      const now = Date.now();
      await this.system.batch(
        [
          { sql: `DELETE FROM schema_defs WHERE env = 'production' AND version = ?`, args: [version] },
          ...[...this.dev.values()].map((d) => ({
            sql: `INSERT INTO schema_defs (env, version, name, definition, updated) VALUES ('production', ?, ?, ?, ?)`,
            args: [version, d.name, JSON.stringify(d), now],
          })),
          {
            sql: `INSERT INTO deploys (version, created, admin, summary) VALUES (?, ?, ?, ?)`,
            args: [
              version,
              now,
              opts.admin ?? null,
              JSON.stringify({
                schemas: [...this.dev.keys()],
                methods: this.code?.developmentMethods() ?? [],
                changes,
                forced: destructive.length > 0,
              }),
            ],
          },
          ...(this.code?.deployStatements(version) ?? []),
          this.bumpEpoch,
        ],
        "write",
      );
      await this.load();
      await this.code?.afterDeploy();
      return { version, changes, warnings };
    });
  }

  /** Deploy history, newest first. */
  async history(): Promise<
    { version: number; created: number; admin: string | null; schemas: string[]; methods: string[]; changes: string[] }[]
  > {
    const rs = await this.system.execute(`SELECT version, created, admin, summary FROM deploys ORDER BY id DESC`);
    return rs.rows.map((r) => {
      const s = JSON.parse(r.summary as string);
      return {
        version: Number(r.version),
        created: Number(r.created),
        admin: (r.admin as string | null) ?? null,
        schemas: s.schemas,
        methods: s.methods ?? [],
        changes: s.changes,
      };
    });
  }

  private async saveDevelopment(defs: SchemaDef[]): Promise<void> {
    const now = Date.now();
    await this.system.batch(
      [
        ...defs.map((d) => ({
          sql: `INSERT INTO schema_defs (env, version, name, definition, updated) VALUES ('development', 0, ?, ?, ?)
                ON CONFLICT(env, version, name) DO UPDATE SET definition = excluded.definition, updated = excluded.updated`,
          args: [d.name, JSON.stringify(d), now],
        })),
        this.bumpEpoch,
      ],
      "write",
    );
    await this.load();
  }
}

function destructiveError(reasons: string[]): ApiError {
  return conflict(`destructive change refused without force: ${reasons.join("; ")}`);
}
