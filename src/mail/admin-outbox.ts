// Query parameters of GET /_admin/api/outbox: ?env=development|production&limit=N (1..500), both optional.

import { badRequest } from "../errors.ts";
import { isEnvName, type EnvName } from "../system/environments.ts";
import { OUTBOX_MAX_LIMIT } from "./mailer.ts";

export function outboxQuery(url: URL): { env?: EnvName; limit?: number } {
  const out: { env?: EnvName; limit?: number } = {};
  const env = url.searchParams.get("env");
  if (env !== null) {
    if (!isEnvName(env)) throw badRequest(`env must be development or production`);
    out.env = env;
  }
  const limit = url.searchParams.get("limit");
  if (limit !== null) {
    const n = /^[0-9]{1,4}$/.test(limit) ? Number(limit) : NaN;
    if (!(n >= 1 && n <= OUTBOX_MAX_LIMIT)) throw badRequest(`limit must be an integer from 1 to ${OUTBOX_MAX_LIMIT}`);
    out.limit = n;
  }
  return out;
}
