// Resolve who and what an API request addresses: the environment and version (Accept header), checked
// against the API key (X-Service-API-Key), giving the ApiContext every datastore operation takes.

import type { ApiContext } from "../datastore/context.ts";
import { ApiError } from "../errors.ts";
import type { Services } from "../services.ts";
import { parseAcceptVersion } from "./accept.ts";

export const API_KEY_HEADER = "x-service-api-key";

/** The context of an API request; synchronous unless a configuration refresh is due. */
export function apiContext(services: Services, request: Request): ApiContext | Promise<ApiContext> {
  const due = services.refreshIfDue();
  return due ? due.then(() => resolveContext(services, request)) : resolveContext(services, request);
}

function resolveContext(services: Services, request: Request): ApiContext {
  const baseUrl = () => services.config.publicUrl ?? new URL(request.url).origin;
  const version = parseAcceptVersion(request.headers.get("accept"));
  const key = request.headers.get(API_KEY_HEADER);
  if (key === null || key === "") throw new ApiError(401, "missing X-Service-API-Key header with the app's public key");
  const keyEnv = services.keys.byPublic.get(key);
  if (keyEnv === undefined) throw new ApiError(401, "invalid API key");

  if (keyEnv === "development") {
    if (version !== null && version !== 0)
      throw new ApiError(401, `the development API key cannot call API version ${version}; use the production key`);
    return {
      env: "development",
      version: 0,
      db: services.envDbs.development,
      schemas: services.catalog.development(),
      infer: services.config.infer,
      principal: { kind: "anonymous" },
      baseUrl,
    };
  }
  if (version === 0) throw new ApiError(401, "the production API key cannot call version 0 (development); use the development key");
  const v = version ?? services.catalog.latestVersion();
  if (v === null) throw new ApiError(404, "no API version is deployed to production yet");
  const schemas = services.catalog.production(v);
  if (!schemas) throw new ApiError(404, `API version ${v} is not deployed`);
  return { env: "production", version: v, db: services.envDbs.production, schemas, infer: false, principal: { kind: "anonymous" }, baseUrl };
}
