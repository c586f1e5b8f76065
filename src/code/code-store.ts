// Custom code bundles in system.db: development's (version 0, replaced by each upload) and one snapshot per
// production version, copied from development by a deploy in the same transaction as the schemas. Held in
// memory; reloaded with the rest of the configuration when another process changes it.

import type { Client, InStatement } from "@libsql/core/api";
import type { EnvName } from "../request-context.ts";
import type { BundleInfo, HookEvent, JobInfo, MethodInfo } from "./sandbox.ts";

export interface StoredBundle {
  env: EnvName;
  version: number;
  source: string;
  js: string;
  methods: MethodInfo[];
  /** Schema -> the hooks the module exports for it. */
  hooks: Record<string, HookEvent[]>;
  jobs: JobInfo[];
  /** Method name -> info, for routing. */
  byName: Map<string, MethodInfo>;
  updated: number;
  /** A short hash of the JavaScript: a new hash is new code. */
  hash: string;
}

const keyOf = (env: EnvName, version: number) => `${env}:${version}`;

/** A short hash of a bundle's JavaScript: a new hash is new code. */
export function codeHash(js: string): string {
  return Bun.hash(js).toString(36);
}

/** The stored exports (the `methods` column): a list of methods (code stored before hooks and jobs), or everything. */
function infoOf(text: string): BundleInfo {
  const parsed = JSON.parse(text) as MethodInfo[] | BundleInfo;
  return Array.isArray(parsed) ? { methods: parsed, hooks: {}, jobs: [] } : parsed;
}

function bundleOf(r: Record<string, unknown>): StoredBundle {
  const { methods, hooks, jobs } = infoOf(r.methods as string);
  const js = r.js as string;
  return {
    env: r.env as EnvName,
    version: Number(r.version),
    source: r.source as string,
    js,
    methods,
    hooks,
    jobs,
    byName: new Map(methods.map((m) => [m.name, m])),
    updated: Number(r.updated),
    hash: codeHash(js),
  };
}

export class CodeStore {
  private bundles = new Map<string, StoredBundle>();

  constructor(
    private readonly system: Client,
    private readonly bumpEpoch: InStatement,
  ) {}

  async load(): Promise<void> {
    const rs = await this.system.execute(`SELECT env, version, source, js, methods, updated FROM code_bundles`);
    const next = new Map<string, StoredBundle>();
    for (const r of rs.rows) {
      const b = bundleOf(r as unknown as Record<string, unknown>);
      next.set(keyOf(b.env, b.version), b);
    }
    this.bundles = next;
  }

  /** The code of development (version 0) or of a production version; undefined when there is none. */
  get(env: EnvName, version: number): StoredBundle | undefined {
    return this.bundles.get(keyOf(env, env === "development" ? 0 : version));
  }

  /** Method names of development's code. */
  developmentMethods(): string[] {
    return this.get("development", 0)?.methods.map((m) => m.name) ?? [];
  }

  /** All bundles held (development's and each production version's). */
  all(): StoredBundle[] {
    return [...this.bundles.values()];
  }

  async putDevelopment(source: string, js: string, info: BundleInfo): Promise<StoredBundle> {
    await this.system.batch(
      [
        {
          sql: `INSERT INTO code_bundles (env, version, source, js, methods, updated) VALUES ('development', 0, ?, ?, ?, ?)
                ON CONFLICT(env, version) DO UPDATE SET source = excluded.source, js = excluded.js, methods = excluded.methods, updated = excluded.updated`,
          args: [source, js, JSON.stringify(info), Date.now()],
        },
        this.bumpEpoch,
      ],
      "write",
    );
    await this.load();
    return this.get("development", 0)!;
  }

  /** Remove development's code; false when there was none. */
  async removeDevelopment(): Promise<boolean> {
    if (!this.get("development", 0)) return false;
    await this.system.batch([`DELETE FROM code_bundles WHERE env = 'development' AND version = 0`, this.bumpEpoch], "write");
    await this.load();
    return true;
  }

  /** Statements that make development's code (or none) production version `version`'s: run in the deploy's batch. */
  deployStatements(version: number): InStatement[] {
    return [
      { sql: `DELETE FROM code_bundles WHERE env = 'production' AND version = ?`, args: [version] },
      {
        sql: `INSERT INTO code_bundles (env, version, source, js, methods, updated)
              SELECT 'production', ?, source, js, methods, ? FROM code_bundles WHERE env = 'development' AND version = 0`,
        args: [version, Date.now()],
      },
    ];
  }
}
