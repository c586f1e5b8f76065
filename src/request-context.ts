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
}

/** `sm_owner` value of a user: "<userSchema>/<key>". */
export function ownerOf(p: Principal): string | null {
  return p.kind === "user" ? `${p.schema}/${p.username}` : null;
}

/** The context of the server itself on one environment (the admin API): every permission passes, nothing is inferred. */
export function systemContext(env: EnvName, db: Client, schemas: SchemaSet, fileBase: () => string): ApiContext {
  return { env, version: schemas.version, db, schemas, infer: false, principal: { kind: "system" }, fileBase };
}
