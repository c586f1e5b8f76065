// Who is calling and on what: the Principal and the ApiContext every datastore and account operation takes
// (environment, API version, the schemas that version sees, the environment's database, the caller). A leaf
// module below auth and datastore; built by the HTTP layer, by the admin API, or by custom code.

import type { Client } from "@libsql/core/api";
import type { SchemaSet } from "./schema/compiled.ts";

/**
 * An environment's name: the union src/system/environments.ts derives from ENVIRONMENTS, spelled out here because
 * this module sits below system. The compiler checks both directions where one is passed as the other.
 */
export type EnvName = "development" | "production";

export type Principal =
  | { kind: "anonymous" }
  /** A request signed with the environment's private key (OAuth 1.0): passes every permission but "none". */
  | { kind: "app" }
  /** A user signed in through a user schema (OAuth 2.0 MAC token). */
  | { kind: "user"; schema: string; username: string; family: string }
  /** The server itself (the admin API's status counts): passes every permission, "none" included. Never built from an API request. */
  | { kind: "system" };

/** How the caller authenticated (a hook's `change.auth`). */
export type AuthKind = "public key" | "mac" | "bearer" | "cookie" | "oauth1" | "private key" | "admin" | "code";
/** Where a write came from when it was not a client of the REST API (a hook's `change.source` then says so). */
export type WriteOrigin = "console" | "code" | "import";

export interface ApiContext {
  env: EnvName;
  version: number;
  db: Client;
  schemas: SchemaSet;
  /** Development with inference on: unknown schemas and fields are created on write. */
  infer: boolean;
  principal: Principal;
  /**
   * The base URL (scheme, host, port, optional path) put before file paths in answers: --files-url, --public-url,
   * or the origin the request being answered addressed. Never stored: a forged Host changes only its own answer.
   */
  fileBase(): string;
  /** How the caller authenticated; absent: judged from the principal (authKind). */
  auth?: AuthKind;
  /** The console, custom code or an import; absent: the REST API. */
  origin?: WriteOrigin;
  /** 0 for a client's write; n for a write made by a hook (or by what it called) run for a write at depth n - 1. */
  hookDepth?: number;
}

/** The auth kind of a context: as set by the edge, else judged from its principal. */
export function authKind(ctx: ApiContext): AuthKind {
  if (ctx.auth) return ctx.auth;
  switch (ctx.principal.kind) {
    case "anonymous":
      return "public key";
    case "app":
      return "private key";
    case "user":
      return "mac";
    case "system":
      return "code";
  }
}

/** `sm_owner` value of a user: "<userSchema>/<key>". */
export function ownerOf(p: Principal): string | null {
  return p.kind === "user" ? `${p.schema}/${p.username}` : null;
}

/** The context of the server itself on one environment (the admin API): every permission passes, nothing is inferred. */
export function systemContext(env: EnvName, db: Client, schemas: SchemaSet, fileBase: () => string): ApiContext {
  return { env, version: schemas.version, db, schemas, infer: false, principal: { kind: "system" }, fileBase };
}
