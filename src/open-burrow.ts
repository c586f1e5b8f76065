// Composition root below the CLI: opens the data directory (system.db, development.db, production.db),
// migrates it, and wires the catalog, keys, admins, settings and datastore into one Burrow record (src/http/burrow.ts): the parts of this running instance.

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "./config.ts";
import { openStore } from "./db/open-store.ts";
import { BunSqliteClient } from "./db/bun-sqlite-client.ts";
import { Datastore } from "./datastore/datastore.ts";
import { TEMP_PASSWORDS_DDL, userRows } from "./datastore/user-rows.ts";
import { Accounts, type RateLimits } from "./auth/accounts.ts";
import { EmailAccounts, type EmailTemplates } from "./auth/email-accounts.ts";
import { EMAIL_CODES_DDL } from "./auth/email-codes.ts";
import { SESSIONS_DDL, Sessions } from "./auth/sessions.ts";
import { MFA_DDL, TotpFactor } from "./auth/second-factor.ts";
import { PASSKEYS_DDL, Passkeys } from "./auth/passkeys.ts";
import { openSharedState } from "./shared-state.ts";
import { Mailer } from "./mail/mailer.ts";
import { PushService } from "./push/push-service.ts";
import { Operations } from "./system/operations.ts";
import { followStore } from "./system/store-reach.ts";
import { PUSH_QUEUE_DDL } from "./push/queue.ts";
import { PUSH_TOKENS_DDL } from "./push/token-store.ts";
import { FILES_DDL, Files, storeFilePaths } from "./files/files.ts";
import { type Logger, createLogger } from "./log.ts";
import { RequestStats } from "./system/request-stats.ts";
import { RequestLogRing } from "./system/request-log-ring.ts";
import { Catalog } from "./schema/catalog.ts";
import { LAYOUT_DDL, rebuildTriggersAtomically } from "./schema/migrate.ts";
import { CHANGE_LOG_DDL } from "./schema/change-log.ts";
import { STREAMS_DDL } from "./live/stream-store.ts";
import { MESSAGES_DDL } from "./live/channels.ts";
import { Live, type LiveSettings } from "./live/live.ts";
import { Admins } from "./system/admins.ts";
import { ENVIRONMENTS } from "./system/environments.ts";
import { type KeySet, ensureKeys, readKeys } from "./system/keys.ts";
import { Settings } from "./system/settings.ts";
import { BUMP_EPOCH, migrateSystemDb, readEpoch } from "./system/system-db.ts";
import { VERSION } from "./version.ts";
import { availableParallelism } from "node:os";
import { CodeStore } from "./code/code-store.ts";
import { CustomCode } from "./code/custom-code.ts";
import { JobRuns } from "./code/job-runs.ts";
import { JobScheduler } from "./code/job-scheduler.ts";
import { CodeHooks } from "./code/hooks.ts";
import { HookQueue } from "./code/hook-queue.ts";
import { HOOK_QUEUE_DDL, RELEASE_HOOK_LEASES_SQL } from "./schema/hook-queue-sql.ts";
import { systemContext } from "./request-context.ts";
import { ThreadRunner } from "./code/thread-runner.ts";
import type { CodeRunner } from "./code/code-runner.ts";
import type { LocalReadFiles } from "./code/local-reads.ts";
import type { publicOnlyLookup } from "./net/public-address.ts";
import { LogStore } from "./system/logs.ts";
import type { KeyIndex, Burrow } from "./http/burrow.ts";
import { SOCIAL_LINKS_DDL, SocialLinks } from "./social/social-links.ts";
import { SocialAccounts, type SocialSettings } from "./social/social-accounts.ts";
import { Backups, type BackupSettings } from "./backup/backups.ts";
import { BACKUP_LEASE_MS, BackupScheduler } from "./backup/schedule.ts";

export type { Burrow } from "./http/burrow.ts";

/** How often the file trash is emptied in the background (writes also empty it as they go). */
const MAINTENANCE_INTERVAL_MS = 60_000;

function indexKeys(set: KeySet): KeyIndex {
  return { set, byPublic: new Map(ENVIRONMENTS.map((e) => [set[e].publicKey, e])) };
}

/** What custom code threads need to answer reads from the embedded store's files themselves. */
function localReadFiles(dir: string, catalog: Catalog): LocalReadFiles {
  const generation = new SharedArrayBuffer(4);
  const current = new Int32Array(generation);
  Atomics.store(current, 0, catalog.development().generation ?? 0);
  catalog.onLoad((g) => Atomics.store(current, 0, g));
  return { files: Object.fromEntries(ENVIRONMENTS.map((env) => [env, join(dir, `${env}.db`)])), generation };
}

/** Threads custom code runs on: two at least (a runaway method on one leaves the other), four at most. */
export function codeThreads(): number {
  return Math.max(2, Math.min(4, availableParallelism()));
}

interface OpenOptions {
  log?: Logger;
  refreshIntervalMs?: number;
  /** Where custom code runs (default: worker threads). */
  codeRunner?: () => CodeRunner;
  /** The http service's DNS lookup (tests resolve test names with it). */
  httpLookup?: ReturnType<typeof publicOnlyLookup>;
  /** The clock of custom code job schedules (tests move it and call `jobs.tick()`). */
  jobClock?: () => number;
}

export async function openBurrow(config: Config, opts: OpenOptions = {}): Promise<Burrow> {
  mkdirSync(config.dir, { recursive: true });
  const log = opts.log ?? createLogger(config.logLevel, undefined, config.logFormat);
  const store = await openStore(config.store);
  const system = store.system;
  const envDbs = { development: store.development, production: store.production };
  await migrateSystemDb(system);
  for (const env of ENVIRONMENTS) {
    await envDbs[env].batch(
      [
        LAYOUT_DDL,
        ...FILES_DDL,
        ...SESSIONS_DDL,
        TEMP_PASSWORDS_DDL,
        EMAIL_CODES_DDL,
        ...MFA_DDL,
        ...PASSKEYS_DDL,
        ...SOCIAL_LINKS_DDL,
        ...PUSH_TOKENS_DDL,
        ...PUSH_QUEUE_DDL,
        // The streams table first: the change-log triggers look at it.
        ...STREAMS_DDL,
        ...CHANGE_LOG_DDL,
        ...MESSAGES_DDL,
        ...HOOK_QUEUE_DDL,
      ],
      "write",
    );
    // Databases made before the user-deletion or change-log triggers existed get them (rebuilt at every start; cheap).
    await rebuildTriggersAtomically(envDbs[env]);
    const paths = await storeFilePaths(envDbs[env]);
    if (paths > 0) log.info(`${env}: ${paths} file links now stored as paths (answers add each request's base)`);
  }
  const keys = indexKeys(await ensureKeys(system, config.keys));
  const catalog = new Catalog(system, envDbs, BUMP_EPOCH);
  await catalog.load();
  await catalog.installDefaults();
  const settings = new Settings(system);
  await settings.load();
  if (store.remote) {
    const local = ENVIRONMENTS.filter((env) => (settings.get(env).files as { store: string }).store === "local");
    if (local.length > 0)
      log.warn(
        `the databases are on ${config.store.url} but ${local.join(" and ")} keep files in ${join(config.dir, "files")}, which other nodes do not share; set files.store to s3 for several nodes`,
      );
  }
  const admins = new Admins(system);
  const files = new Files(config.dir, settings, log);
  const data = new Datastore(catalog, files);
  // State the nodes must agree on: in memory for one node, in the system database when several share the store.
  const shared = await openSharedState(system, store.remote);
  const { limiter, nonces, jobs } = shared;
  const sessions = {
    development: new Sessions(envDbs.development, shared.sessionCacheMs),
    production: new Sessions(envDbs.production, shared.sessionCacheMs),
  };
  const mailer = new Mailer(system, settings, log);
  await mailer.init();
  const accounts = new Accounts({
    sessions: (ctx) => sessions[ctx.env],
    limiter,
    users: userRows,
    mailer,
    limits: (ctx) => settings.get(ctx.env).rateLimits as RateLimits,
    appName: (ctx) => (settings.get(ctx.env).app as { name: string }).name,
  });
  // Accounts by email: verification mails and sign-in codes (grant_type=email_code).
  const emailAccounts = new EmailAccounts({
    accounts,
    users: userRows,
    limiter,
    mailer,
    templates: (ctx) => (settings.get(ctx.env).auth as { mail: EmailTemplates }).mail,
    appName: (ctx) => (settings.get(ctx.env).app as { name: string }).name,
    failed: (message) => log.warn(message),
  });
  accounts.useGrant("email_code", emailAccounts.grant);
  // The TOTP second factor: asked for after a password (or email code), completed with grant_type=mfa.
  const secondFactor = new TotpFactor({ accounts, users: userRows, limiter, settings });
  accounts.useSecondFactor(secondFactor);
  accounts.useGrant("mfa", secondFactor.grant);
  // Passkeys (WebAuthn), grant_type=passkey; decoy credential ids come from the private key (read when used).
  const passkeys = new Passkeys({ accounts, users: userRows, settings, secret: (env) => burrow.keys.set[env].privateKey });
  accounts.useGrant("passkey", passkeys.grant);
  if (config.admin) {
    const what = await admins.upsert(config.admin.email, config.admin.password);
    log.info(`admin ${config.admin.email} ${what} from BURROW_ADMIN_EMAIL`);
  }

  const interval = opts.refreshIntervalMs ?? shared.refreshIntervalMs;
  let epoch = await readEpoch(system);
  let lastCheck = Date.now();
  let checking: Promise<void> | undefined;
  let closed = false;

  const push = new PushService(envDbs, settings, log, store.remote);
  // A deleted user's sessions, temporary password, links and device tokens end in the delete's own transaction
  // (the database's user-deletion triggers); this node also forgets the sessions it holds in memory at once.
  data.onSignedOut((ctx, schema, keys) => sessions[ctx.env].forgetUsers(schema, keys));

  const socialLinks = new SocialLinks();
  const social = new SocialAccounts({
    settings: (env) => settings.get(env).social as unknown as SocialSettings,
    accounts,
    users: userRows,
    data,
    links: socialLinks,
    nonces,
  });

  const live = new Live({
    envDbs,
    remote: store.remote,
    log,
    schemas: (env, v) => (env === "development" ? (v === 0 ? catalog.development() : undefined) : catalog.production(v)),
    current: (env) => {
      if (env === "development") return catalog.development();
      const latest = catalog.latestVersion();
      return latest === null ? undefined : catalog.production(latest);
    },
    settings: (env) => settings.get(env).live as unknown as LiveSettings,
  });

  const logs = new LogStore(system);
  const requestStats = new RequestStats();
  const ops = new Operations(config.dir, config.store.url !== null && config.store.url !== undefined);
  for (const db of [system, store.development, store.production]) if (db instanceof BunSqliteClient) db.disk = ops.disk; // db/disk-full.ts
  store.observe(followStore(ops, log)); // the store's reachability follows every request to a libSQL server
  const codeStore = new CodeStore(system, BUMP_EPOCH);
  await codeStore.load();
  const code = new CustomCode(
    codeStore,
    catalog,
    {
      data,
      push,
      settings,
      logs,
      cache: shared.codeCache,
      httpLookup: opts.httpLookup,
      live: { publish: (env, channel, d) => live.publish(env, channel, d) },
      mail: { mailer, limiter },
    },
    log,
    opts.codeRunner ??
      (() =>
        new ThreadRunner({
          threads: codeThreads(),
          warn: (m) => log.warn(m),
          localReads: store.remote ? undefined : localReadFiles(config.store.dir, catalog),
          apiActivity: requestStats.answered.buffer as SharedArrayBuffer,
        })),
  );
  // Hooks: before-hooks run from the datastore's write paths; after-hooks from each environment's queue.
  const hooks = new CodeHooks(code, settings, logs, envDbs);
  data.useHooks(hooks);
  code.onChanged(() => hooks.sync());
  await hooks.sync();
  const fileBase = () => config.filesUrl ?? config.publicUrl ?? `http://127.0.0.1:${config.http.port}`;
  const hookQueue = new HookQueue({
    envDbs,
    code,
    settings,
    logs,
    log,
    active: (env) => hooks.queuesAfterHooks({ env } as never),
    context: (env, version) => {
      const schemas = env === "development" ? catalog.development() : catalog.production(version);
      return schemas ? systemContext(env, envDbs[env], schemas, fileBase) : undefined;
    },
  });
  // On its own store a starting process is the only one: leases taken by a process that died are free at once.
  if (!store.remote) for (const env of ENVIRONMENTS) await envDbs[env].execute(RELEASE_HOOK_LEASES_SQL);
  const stopHookQueue = hookQueue.start();
  hooks.useBackpressure((env) => hookQueue.admit(env));
  catalog.setCodeHooks({
    developmentMethods: () => codeStore.developmentMethods(),
    deployStatements: (version) => codeStore.deployStatements(version),
    afterDeploy: async () => {
      await codeStore.load();
      await code.sync();
    },
  });

  // Custom code jobs: their runs in system.db; started with the maintenance (`serve`), ticked by hand in tests.
  const jobRuns = new JobRuns(system);
  await jobRuns.init();
  const scheduler = new JobScheduler({
    code,
    catalog,
    envDbs,
    settings,
    logs,
    runs: jobRuns,
    log,
    fileBase: () => config.filesUrl ?? config.publicUrl ?? `http://127.0.0.1:${config.http.port}`,
    now: opts.jobClock,
    refresh: () => burrow.refreshIfDue(),
  });

  // Backups are server-wide: their settings are production's (settings.ts marks them so).
  const backupSettings = () => settings.get("production").backups as unknown as BackupSettings;
  const backups = new Backups({
    dataDir: config.dir,
    version: VERSION,
    clients: () => [system, envDbs.development, envDbs.production],
    settings: backupSettings,
    upload: () => (name, path) => files.s3Store("production").uploadBackup(name, path),
    store: config.store,
  });

  const burrow: Burrow = {
    config,
    version: VERSION,
    startedAt: Date.now(),
    log,
    system,
    envDbs,
    catalog,
    admins,
    settings,
    data,
    files,
    sessions,
    nonces,
    limiter,
    mailer,
    accounts,
    emailAccounts,
    secondFactor,
    passkeys,
    social,
    push,
    logs,
    code,
    requestStats,
    ops,
    requestLog: new RequestLogRing(),
    backups,
    live,
    hooks: hookQueue,
    jobs: scheduler,
    keys,
    refreshIfDue() {
      // Requests arriving while a look is under way wait for it too, so none is served from the old version.
      if (checking) return checking;
      const now = Date.now();
      if (now - lastCheck < interval) return undefined;
      lastCheck = now;
      const look = readEpoch(system).then((e) => (e !== epoch ? burrow.reload() : undefined));
      checking = look.finally(() => {
        checking = undefined;
      });
      return checking;
    },
    async reload() {
      const e = await readEpoch(system);
      const stored = await readKeys(system);
      if (stored.development && stored.production) burrow.keys = indexKeys(stored as KeySet);
      await Promise.all([catalog.load(), settings.load(), codeStore.load()]);
      await code.sync();
      epoch = e;
      lastCheck = Date.now();
    },
    startMaintenance() {
      const round = () => {
        for (const env of ENVIRONMENTS) {
          files.drain(env, envDbs[env]).catch((e) => log.warn("emptying the file trash failed", { env, error: String(e) }));
          sessions[env].sweep().catch((e) => log.warn("removing expired sessions failed", { env, error: String(e) }));
        }
        mailer.prune().catch((e) => log.warn("pruning the outbox failed", { error: String(e) }));
        live.maintain().catch((e) => log.warn("pruning the change log failed", { error: String(e) }));
        shared.sweep().catch((e) => log.warn("sweeping shared state failed", { error: String(e) }));
      };
      // With several nodes on one store, one node at a time runs a round (whichever holds the lease).
      const drain = () => {
        jobs.claim("maintenance", MAINTENANCE_INTERVAL_MS * 2).then(
          (mine) => mine && round(),
          (e) => log.warn("taking the maintenance lease failed", { error: String(e) }),
        );
      };
      drain();
      const timer = setInterval(drain, MAINTENANCE_INTERVAL_MS);
      timer.unref?.();
      const stopSchedule = new BackupScheduler(backups, backupSettings, log, Date.now, () => jobs.claim("backup", BACKUP_LEASE_MS)).start();
      const stopJobs = scheduler.start();
      return () => {
        clearInterval(timer);
        stopSchedule();
        stopJobs();
      };
    },
    close() {
      if (closed) return;
      closed = true;
      scheduler.close();
      stopHookQueue();
      live.close();
      void code.close();
      system.close();
      for (const env of ENVIRONMENTS) envDbs[env].close();
    },
  };
  return burrow;
}
