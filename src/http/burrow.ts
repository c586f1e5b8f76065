// `Burrow`: one running instance's parts (databases, catalog, datastore, accounts, push, custom code, ...), the
// record src/open-burrow.ts builds at start-up and every route is given. Declared here, below its builder, so
// src/http imports only downward. (Custom code's `services` object is another thing: src/code/services/.)

import type { Client } from "@libsql/core/api";
import type { Accounts } from "../auth/accounts.ts";
import type { EmailAccounts } from "../auth/email-accounts.ts";
import type { NonceCache } from "../auth/nonces.ts";
import type { TotpFactor } from "../auth/second-factor.ts";
import type { Passkeys } from "../auth/passkeys.ts";
import type { RateLimiter } from "../auth/rate-limit.ts";
import type { Sessions } from "../auth/sessions.ts";
import type { Config } from "../config.ts";
import type { Datastore } from "../datastore/datastore.ts";
import type { Files } from "../files/files.ts";
import type { Logger } from "../log.ts";
import type { Mailer } from "../mail/mailer.ts";
import type { PushService } from "../push/push-service.ts";
import type { Catalog } from "../schema/catalog.ts";
import type { Admins } from "../system/admins.ts";
import type { EnvName } from "../system/environments.ts";
import type { KeySet } from "../system/keys.ts";
import type { Settings } from "../system/settings.ts";
import type { LogStore } from "../system/logs.ts";
import type { CustomCode } from "../code/custom-code.ts";
import type { SocialAccounts } from "../social/social-accounts.ts";
import type { RequestStats } from "../system/request-stats.ts";
import type { Operations } from "../system/operations.ts";
import type { RequestLogRing } from "../system/request-log-ring.ts";
import type { Backups } from "../backup/backups.ts";
import type { Live } from "../live/live.ts";
import type { JobScheduler } from "../code/job-scheduler.ts";
import type { HookQueue } from "../code/hook-queue.ts";

export interface KeyIndex {
  set: KeySet;
  /** public key -> environment */
  byPublic: Map<string, EnvName>;
}

export interface Burrow {
  readonly config: Config;
  readonly version: string;
  readonly startedAt: number;
  readonly log: Logger;
  readonly system: Client;
  readonly envDbs: Record<EnvName, Client>;
  readonly catalog: Catalog;
  readonly admins: Admins;
  readonly settings: Settings;
  /** The datastore: every object operation, with its access checks (routes and custom code call only this). */
  readonly data: Datastore;
  readonly files: Files;
  readonly sessions: Record<EnvName, Sessions>;
  readonly nonces: NonceCache;
  readonly limiter: RateLimiter;
  readonly mailer: Mailer;
  readonly accounts: Accounts;
  /** Email verification and sign-in codes of user schemas. */
  readonly emailAccounts: EmailAccounts;
  /** The TOTP second factor of user accounts: enrolment, confirmation, turning it off. */
  readonly secondFactor: TotpFactor;
  /** Passkeys (WebAuthn) of user accounts: registration, login options, the list of a user's passkeys. */
  readonly passkeys: Passkeys;
  /** Social sign-in: create, log in, link and unlink users through provider accounts. */
  readonly social: SocialAccounts;
  /** Device tokens, the push queue and its delivery workers (started by `serve`). */
  readonly push: PushService;
  /** Log lines kept for the admin API (custom code's log service). */
  readonly logs: LogStore;
  /** Custom code: development's upload, per-version snapshots, method calls. */
  readonly code: CustomCode;
  /** Request figures of this process by area (status page, /_metrics). */
  readonly requestStats: RequestStats;
  /** Operating conditions: load shedding, the disk, the store's reachability (status page, /_metrics). */
  readonly ops: Operations;
  /** The newest request log entries of this process (at --log-level info and above). */
  readonly requestLog: RequestLogRing;
  /** Backups of the data directory (<dir>/backups/) and their schedule (started with the maintenance). */
  readonly backups: Backups;
  /** Live data: streams, their subscriptions and channels, fed from the change log. */
  readonly live: Live;
  /** The after-hook queue's runner (its figures). */
  readonly hooks: Pick<HookQueue, "stats">;
  /** Custom code jobs: their schedules, runs and history (looking for due ones starts with the maintenance). */
  readonly jobs: JobScheduler;
  keys: KeyIndex;
  /** Reload keys, settings and schemas when another process changed them; undefined when not due yet. */
  refreshIfDue(): Promise<void> | undefined;
  reload(): Promise<void>;
  /** Background upkeep (emptying the file trash, scheduled backups); returns a function that stops it. */
  startMaintenance(): () => void;
  close(): void;
}
