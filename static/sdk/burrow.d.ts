// Declarations of the Burrow client library (/_sdk/burrow.js), served at /_sdk/burrow.d.ts. `connect<S>()` takes
// a map of object types by schema name (the generated `Schemas` of /_sdk/types.d.ts plugs in here); without one
// every schema's objects are plain records.

/** Object types by schema name: `{ todo: Todo; ... }`. */
export type SchemaMap = Record<string, object>;
/** What `connect()` uses without a SchemaMap: any schema, any fields. */
export type AnySchemas = Record<string, Record<string, unknown>>;

/** A parsed JSON answer. */
// biome-ignore lint/suspicious/noExplicitAny: answers are whatever JSON the server sent
export type Json = any;

type Scalar<V> = V extends readonly (infer I)[] ? I : V;
type Operator = "gt" | "lt" | "gte" | "lte" | "ne" | "in" | "nin" | "null";
type OperatorValue<V, Op extends Operator> = Op extends "null" ? boolean : Op extends "in" | "nin" ? Scalar<V>[] : Scalar<V>;

/** Query conditions on an object of type T: `{ done: false, "priority[gt]": 2, "tags[in]": ["a", "b"] }`. */
export type Where<T> = { [K in keyof T & string]?: Scalar<T[K]> | null } & {
  [P in `${keyof T & string}[${Operator}]`]?: P extends `${infer F}[${infer Op}]`
    ? F extends keyof T
      ? Op extends Operator
        ? OperatorValue<T[F], Op>
        : never
      : never
    : never;
};

/** The server answered outside 2xx. */
export class BurrowError extends Error {
  status: number;
  /** The parsed answer, usually `{error, error_description?}` (`error === "mfa_required"` carries `mfa_token`). */
  body: Json;
}

/** No answer came (offline, DNS, connection refused, aborted). */
export class NetworkError extends Error {
  cause: unknown;
}

/** A store for the user's tokens (sync or async). */
export interface TokenStore {
  get(key: string): string | null | undefined | Promise<string | null | undefined>;
  set(key: string, value: string): unknown;
  remove(key: string): unknown;
}

export interface ConnectOptions {
  /** The server's origin, e.g. "https://api.example.com". */
  url: string;
  /** The environment's public key. */
  publicKey: string;
  /** 0 for development, N for production version N; left out, production's newest version. */
  version?: number;
  /** "mac" (default): requests signed with HMAC-SHA1; "bearer": Authorization: Bearer (https or loopback). */
  tokenType?: "mac" | "bearer";
  /** "memory" (default), "local" (localStorage) or {get, set, remove}. */
  storage?: "memory" | "local" | TokenStore;
  /** false: read live data with fetch streaming even where EventSource exists. */
  eventSource?: boolean;
  fetch?: typeof fetch;
}

/** Objects as the server answers them: the fields plus the key and dates. */
export type Stored<T> = T & { createddate: number; lastmoddate: number; sm_owner?: string } & Record<string, unknown>;
/** A value of a binary field may be sent as a Blob or bytes; it comes back as the file's URL. */
export type Writable<T> = { [K in keyof T]?: T[K] | Blob | ArrayBuffer | ArrayBufferView | null };

export interface ReadOptions<T> {
  select?: (keyof T & string) | (keyof T & string)[] | string | string[];
  /** Relationship expansion depth, 0 to 3. */
  expand?: number;
}

export interface FindOptions<T> extends ReadOptions<T> {
  where?: Where<T>;
  /** "title:desc" or ["priority:desc", "title"]. */
  orderBy?: string | string[];
  /** First and last index (inclusive) of the page. */
  range?: [number, number?];
  /** Find the total even for a page past the end (one more request). */
  count?: boolean;
}

export type LiveEventType = "create" | "update" | "delete" | "enter" | "leave";

export interface LiveEvent<T> {
  type: LiveEventType;
  id: string | null;
  schema: string;
  /** The object (after the write; as it was for delete; the key only for leave). */
  object: Partial<Stored<T>>;
}

export interface SubscribeOptions<T> {
  where?: Where<T>;
  select?: string | string[];
  events?: LiveEventType[];
}

export interface SubscribeHandlers {
  onEnd?: (reason: string) => void;
  onReset?: (reason: string) => void;
  onError?: (error: string) => void;
}

/** Stops the subscription (settles once the server dropped it); `ready` settles once the server holds it. */
export type Unsubscribe = (() => Promise<void>) & { ready: Promise<void> };

export interface Collection<T extends object = Record<string, unknown>> {
  readonly name: string;
  create(obj: Writable<T>): Promise<Stored<T>>;
  create(objs: Writable<T>[]): Promise<{ succeeded: string[]; failed: string[] }>;
  get(id: string, options?: ReadOptions<T>): Promise<Stored<T>>;
  update(id: string, fields: Writable<T>): Promise<Stored<T>>;
  save(obj: Writable<T>, options?: { relations?: string }): Promise<Stored<T>>;
  remove(id: string, options?: { cascade?: boolean }): Promise<void>;
  removeWhere(where: Where<T>): Promise<void>;
  find(options?: FindOptions<T>): Promise<{ items: Stored<T>[]; total: number }>;
  increment(id: string, by: { [K in keyof T]?: number }): Promise<Stored<T>>;
  append(id: string, field: keyof T & string, values: unknown[]): Promise<Stored<T>>;
  pull(id: string, field: keyof T & string, values: unknown[], options?: { cascade?: boolean }): Promise<void>;
  createRelated(id: string, field: keyof T & string, objs: object | object[]): Promise<{ succeeded: string[]; failed: string[] }>;
  subscribe(options: SubscribeOptions<T>, onEvent: (event: LiveEvent<T>) => void, handlers?: SubscribeHandlers): Unsubscribe;
}

export interface Users<U = Record<string, unknown>> {
  signup(fields: { username: string; password: string } & Record<string, unknown>): Promise<Stored<U>>;
  login(credentials: { username: string; password: string; new_password?: string }): Promise<Stored<U>>;
  requestCode(username: string): Promise<void>;
  loginWithCode(p: { username: string; code: string }): Promise<Stored<U>>;
  loginWithMfa(p: { mfaToken: string; code: string }): Promise<Stored<U>>;
  loginWithPasskey(p?: { username?: string }): Promise<Stored<U>>;
  /** "social1", "social2", "aggregator", "oidc" (or an endpoint name); `create: true` creates the user if needed. */
  loginWithToken(provider: string, params: Record<string, unknown> & { create?: boolean }): Promise<Stored<U>>;
  logout(): Promise<void>;
  current(): Promise<Stored<U>>;
  isLoggedIn(): Promise<boolean>;
}

export interface Push {
  register(type: "ios" | "androidgcm" | "web" | string, token: string, user?: string): Promise<void>;
  unregister(type: string, token: string): Promise<void>;
  subscribeWebPush(
    registration: ServiceWorkerRegistration,
    options?: { vapidPublicKey?: string; user?: string },
  ): Promise<PushSubscription>;
}

type UserOf<S> = S extends { user: infer U extends object } ? U : Record<string, unknown>;

export interface Burrow<S extends SchemaMap = AnySchemas> {
  users: Users<UserOf<S>> & (<K extends keyof S & string>(schema: K) => Users<S[K]>);
  schema<K extends keyof S & string>(name: K): Collection<S[K]>;
  call(method: string, params?: unknown, options?: { method?: "GET" | "POST" | "PUT" | "DELETE" }): Promise<Json>;
  push: Push;
  request(
    method: string,
    path: string,
    options?: { body?: unknown; query?: string; headers?: Record<string, string> },
  ): Promise<{
    status: number;
    headers: Headers;
    body: Json;
  }>;
}

export function connect<S extends SchemaMap = AnySchemas>(options: ConnectOptions): Burrow<S>;
