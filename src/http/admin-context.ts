// The admin API's request basics: the environment a path names, the `?version=` and flag query parameters, the
// bearer token, the OpenAPI description every admin route shares, and the context it acts in on an environment:
// the server itself (every permission passes), with development's schemas or a production version's (the newest
// unless one is named). Shared by the admin route files.

import { badRequest, notFound } from "../errors.ts";
import { type ApiContext, systemContext } from "../request-context.ts";
import { type EnvName, isEnvName } from "../system/environments.ts";
import type { Burrow } from "./burrow.ts";

/** An environment named in an admin path or query; 404 for any other name. */
export function environmentOf(raw: string): EnvName {
  if (!isEnvName(raw)) throw notFound(`unknown environment "${raw.slice(0, 32)}"; use development or production`);
  return raw;
}

/** `?version=N`: 0 (or absent) is development. */
export function versionParam(url: URL): number {
  const raw = url.searchParams.get("version");
  if (raw === null || raw === "") return 0;
  if (!/^\d{1,7}$/.test(raw)) throw badRequest(`version must be a non-negative integer, not "${raw.slice(0, 32)}"`);
  return Number(raw);
}

/** A query flag: present and not "false" or "0". */
export function flag(url: URL, name: string): boolean {
  const v = url.searchParams.get(name);
  return v !== null && v !== "false" && v !== "0";
}

/** The OpenAPI description of an admin route: tagged admin, needing the admin bearer token. */
export const adminDoc = (summary: string, description?: string) => ({
  tags: ["admin"],
  summary,
  description,
  security: [{ adminBearer: [] }],
});

/** The bearer token of `Authorization: Bearer <token>`, or null. */
export function bearerToken(request: Request): string | null {
  return /^Bearer\s+(\S+)\s*$/i.exec(request.headers.get("authorization") ?? "")?.[1] ?? null;
}

/**
 * The context of the server on one environment: development's schemas, or production version `versionRaw`'s
 * (default: the newest). `origin` is the request's, for file links when no public URL is set.
 */
export function adminDataContext(burrow: Burrow, envRaw: string, versionRaw: string | null, origin: string): ApiContext {
  const env = environmentOf(envRaw);
  const fileBase = () => burrow.config.filesUrl ?? burrow.config.publicUrl ?? origin;
  // Writes through the admin API are the console's (custom code hooks see them so).
  if (env === "development") return { ...systemContext(env, burrow.envDbs[env], burrow.catalog.development(), fileBase), ...CONSOLE };
  const raw = versionRaw;
  if (raw !== null && !/^[1-9]\d{0,6}$/.test(raw)) throw badRequest(`_version must be a positive integer, not "${raw.slice(0, 32)}"`);
  const version = raw === null ? burrow.catalog.latestVersion() : Number(raw);
  const schemas = version === null ? undefined : burrow.catalog.production(version);
  if (!schemas) throw notFound(version === null ? "production has no deployed version yet" : `API version ${version} is not deployed`);
  return { ...systemContext(env, burrow.envDbs[env], schemas, fileBase), ...CONSOLE };
}

const CONSOLE = { auth: "admin", origin: "console" } as const;
