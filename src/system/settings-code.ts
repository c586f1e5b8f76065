// The custom code settings of an environment (`code.*`): limits of calls, the http and config services, the time
// zone of job schedules, hooks, jobs and the mail service; and the account settings (`auth.*`). Part of the
// settings spec (settings.ts).

import type { Spec } from "./settings.ts";

const both = (v: unknown) => ({ development: v, production: v });

export const CODE_SETTINGS: Spec = {
  /** Wall time of one custom code call, ms. */
  timeoutMs: { type: "integer", min: 100, max: 25_000, default: both(25_000) },
  /** Memory cap of one sandbox, MB. */
  memoryMb: { type: "integer", min: 8, max: 1024, default: both(64) },
  http: {
    /** Let the http service reach loopback, private and link-local addresses. */
    allowPrivate: { type: "boolean", default: both(false) },
    timeoutMs: { type: "integer", min: 100, max: 25_000, default: both(10_000) },
    maxResponseBytes: { type: "integer", min: 1024, max: 50 * 1024 * 1024, default: both(5 * 1024 * 1024) },
  },
  /** Variables the config service reads (name -> value; third-party API keys): write-only, reads list the names. */
  config: { type: "string-map", secret: true, default: both({}) },
  /** Time zone of job schedules (an IANA name). */
  timezone: { type: "string", zone: true, default: both("UTC") },
  hooks: {
    /** Wall time of one hook call, ms (a before-hook past it refuses the write with 500). */
    timeoutMs: { type: "integer", min: 100, max: 25_000, default: both(2_000) },
    /** Objects an update or delete by query may touch when its schema has a before-hook (past it: 400). */
    maxPerQuery: { type: "integer", min: 1, max: 100_000, default: both(1_000) },
    /** Tries of an after-hook before it goes to the dead-letter list. */
    attempts: { type: "integer", min: 1, max: 100, default: both(8) },
  },
  jobs: {
    /** Occurrences missed while no node ran: "skip" records them, "run once" also runs the job once at start. */
    missed: { type: "string", oneOf: ["skip", "run once"], default: both("skip") },
  },
  mail: {
    /** Mails custom code may send per hour in this environment (services.mail.send). */
    perHour: { type: "integer", min: 1, max: 1_000_000, default: { development: 100, production: 1_000 } },
  },
};

/** Accounts (`auth.*`): bearer tokens over plain http, the mails of email verification and sign-in codes, passkeys. */
export const AUTH_SETTINGS: Spec = {
  /** Accept `Authorization: Bearer` on plain http from other hosts than loopback (off: https through a trusted proxy only). */
  bearerOverHttp: { type: "boolean", default: both(false) },
  mail: {
    /** {app}, {username}, {code} and {link} are replaced. */
    verifySubject: { type: "string", default: both("{app}: confirm your email address") },
    verifyText: {
      type: "string",
      default: both(
        "Hello {username},\n\nconfirm your email address for {app} with this code: {code}\n\nor open this link: {link}\n\nThe code is valid for 10 minutes. If you did not ask for it, ignore this mail.\n",
      ),
    },
    codeSubject: { type: "string", default: both("{app}: your sign-in code") },
    codeText: {
      type: "string",
      default: both(
        "Hello {username},\n\nyour sign-in code for {app} is: {code}\n\nIt is valid for 10 minutes and works once. If you did not ask for it, ignore this mail.\n",
      ),
    },
  },
  passkeys: {
    /** The relying party id (the site's domain, e.g. "example.com"); empty: the host of the request. */
    rpId: { type: "string", default: both("") },
    /** Origins a passkey ceremony may come from (e.g. "https://app.example.com"); empty: the request's origin. */
    origins: { type: "string[]", default: both([]) },
  },
};
