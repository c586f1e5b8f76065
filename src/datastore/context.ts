// What a datastore operation needs to know about its caller: environment, API version, the schemas that
// version sees, the environment's database and who is calling. Built by the HTTP layer, or by custom code.

import type { Client } from "@libsql/core/api";
import type { SchemaSet } from "../schema/compiled.ts";
import type { EnvName } from "../system/environments.ts";

export type Principal =
  | { kind: "anonymous" }
  /** A request signed with the environment's private key (OAuth 1.0): passes every permission but "none". */
  | { kind: "app" }
  /** A user signed in through a user schema (OAuth 2.0 MAC token). */
  | { kind: "user"; schema: string; username: string; family: string };

export interface ApiContext {
  env: EnvName;
  version: number;
  db: Client;
  schemas: SchemaSet;
  /** Development with inference on: unknown schemas and fields are created on write. */
  infer: boolean;
  principal: Principal;
  /** The public base URL (scheme, host, port) for links such as file URLs: --public-url or the request's own. */
  baseUrl(): string;
}

/** `sm_owner` value of a user: "<userSchema>/<key>". */
export function ownerOf(p: Principal): string | null {
  return p.kind === "user" ? `${p.schema}/${p.username}` : null;
}
