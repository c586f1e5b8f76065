// The offline commands: admin create, keys, schema apply, schema export, code deploy, deploy. Each opens the data
// directory directly (safe next to a running server: SQLite locking plus the configuration epoch).

import { readdirSync, readFileSync, statSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Config, ConfigError, isEmail } from "../config.ts";
import { notFound } from "../errors.ts";
import { openBurrow } from "../open-burrow.ts";
import { CodeError } from "../code/code-error.ts";
import { bundleCode } from "./code-deploy.ts";
import { ROLES, isRole } from "../system/admin-roles.ts";
import { ADMIN_PASSWORD_MAX, ADMIN_PASSWORD_MIN, adminPasswordProblem } from "../system/admins.ts";

const out = (s: string) => process.stdout.write(`${s}\n`);

async function withBurrow<T>(config: Config, fn: (s: Awaited<ReturnType<typeof openBurrow>>) => Promise<T>): Promise<T> {
  const burrow = await openBurrow(config);
  try {
    return await fn(burrow);
  } finally {
    burrow.close();
  }
}

/** Create an admin (an owner unless --role says otherwise) or set an existing one's password, and role with --role. */
export async function adminCreate(config: Config, flags: Record<string, string | boolean>): Promise<void> {
  const email = flags["--email"];
  const password = flags["--password"];
  const role = flags["--role"];
  if (typeof email !== "string" || !isEmail(email)) throw new ConfigError("admin create needs --email <address>");
  if (typeof password !== "string" || adminPasswordProblem(password))
    throw new ConfigError(`admin create needs --password of ${ADMIN_PASSWORD_MIN} to ${ADMIN_PASSWORD_MAX} characters`);
  if (role !== undefined && !isRole(role)) throw new ConfigError(`--role must be one of ${ROLES.join(", ")}`);
  await withBurrow(config, async (s) => {
    const what = await s.admins.upsert(email, password, role);
    const now = (await s.admins.list()).find((a) => a.email === email.toLowerCase());
    out(`admin ${email.toLowerCase()} ${what} (${now?.role ?? role ?? "owner"})`);
  });
}

export async function keys(config: Config, flags: Record<string, string | boolean>): Promise<void> {
  await withBurrow(config, async (s) => {
    const k = s.keys.set;
    if (flags["--json"]) return out(JSON.stringify(k, null, 2));
    out(`development  public  ${k.development.publicKey}`);
    out(`development  private ${k.development.privateKey}`);
    out(`production   public  ${k.production.publicKey}`);
    out(`production   private ${k.production.privateKey}`);
  });
}

/** Definitions from a .json file (one definition or an array) or a directory of them. */
function readDefinitions(path: string): unknown[] {
  let files: string[];
  try {
    files = statSync(path).isDirectory()
      ? readdirSync(path)
          .filter((f) => f.endsWith(".json"))
          .sort()
          .map((f) => join(path, f))
      : [path];
  } catch {
    throw new ConfigError(`cannot read ${path}`);
  }
  const defs: unknown[] = [];
  for (const f of files) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(f, "utf8"));
    } catch (e) {
      throw new ConfigError(`${f}: not valid JSON (${(e as Error).message})`);
    }
    defs.push(...(Array.isArray(parsed) ? parsed : [parsed]));
  }
  return defs;
}

export async function schemaApply(config: Config, path: string | undefined, flags: Record<string, string | boolean>): Promise<void> {
  if (!path) throw new ConfigError("schema apply needs a file or directory of schema definitions");
  const defs = readDefinitions(path);
  await withBurrow(config, async (s) => {
    const results = await s.catalog.putMany(defs, { force: flags["--force"] === true, dryRun: flags["--dry-run"] === true });
    for (const r of results) {
      if (!r.changed) out(`= ${r.definition.name} (unchanged)`);
      else for (const line of r.changes) out(line);
    }
    const n = results.filter((r) => r.changed).length;
    out(flags["--dry-run"] ? `plan: ${n} schema(s) would change` : `applied: ${n} schema(s) changed, ${results.length - n} unchanged`);
  });
}

export async function schemaExport(config: Config, flags: Record<string, string | boolean>): Promise<void> {
  const raw = flags["--version"];
  const version = raw === undefined ? 0 : Number(raw);
  if (!Number.isSafeInteger(version) || version < 0) throw new ConfigError(`invalid --version "${raw}"`);
  await withBurrow(config, async (s) => {
    const defs = s.catalog.definitions(version);
    if (!defs) throw notFound(`API version ${version} is not deployed`);
    const dir = flags["--out"];
    if (typeof dir === "string") {
      mkdirSync(dir, { recursive: true });
      for (const d of defs) writeFileSync(join(dir, `${d.name}.json`), `${JSON.stringify(d, null, 2)}\n`);
      out(`wrote ${defs.length} schema(s) to ${dir}`);
    } else out(JSON.stringify(defs, null, 2));
  });
}

export async function deploy(config: Config, flags: Record<string, string | boolean>): Promise<void> {
  const raw = flags["--version"];
  const version = raw === undefined ? undefined : Number(raw);
  await withBurrow(config, async (s) => {
    const r = await s.catalog.deploy({ version, force: flags["--force"] === true, dryRun: flags["--dry-run"] === true, admin: "cli" });
    for (const line of r.changes) out(line);
    for (const w of r.warnings) process.stderr.write(`warning: ${w}\n`);
    out(
      flags["--dry-run"]
        ? `plan: would deploy development as production version ${r.version}`
        : `deployed development as production version ${r.version}`,
    );
  });
}

export async function codeDeploy(config: Config, path: string | undefined): Promise<void> {
  if (!path) throw new ConfigError("code deploy needs a file or a directory of custom code");
  const source = await bundleCode(path);
  await withBurrow(config, async (s) => {
    try {
      const r = await s.code.upload(source, "js");
      out(`development code: ${r.methods.length} method(s): ${r.methods.map((m) => `/${m.name}`).join(" ") || "(none)"}`);
      out(`production gets it with the next deploy`);
    } catch (e) {
      if (e instanceof CodeError) throw new Error(`code deploy: ${e.message}${e.line !== undefined ? ` (bundled line ${e.line})` : ""}`);
      throw e;
    }
  });
}
