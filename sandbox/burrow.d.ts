// Burrow custom code: the types of a bundle's methods, hooks and jobs, what they are called with and the services
// they may call.
// Reference it from a bundle (`/// <reference path="burrow.d.ts" />`, or copy it next to your sources) and
// type-check with `tsc --noEmit`. Every service call is async and runs on the server, outside the sandbox.

declare namespace Burrow {
  /** What a method is called with. Frozen: a method cannot change it. */
  interface Request {
    verb: "GET" | "POST" | "PUT" | "DELETE";
    /** The URL the client called (path and query). */
    url: string;
    /** GET and DELETE: the declared URL parameters that were sent (only those listed in the method's `params`). */
    params: Record<string, string>;
    /** PUT and POST: the raw request body ("" when none); parse JSON yourself. */
    body: string;
    /** Request headers, lowercase names (Authorization and Cookie are left out). */
    headers: Record<string, string>;
    /** The username of the signed-in caller (a MAC-signed request or the session cookie), or null. */
    loggedInUser: string | null;
    /** 0 for development, N for production API version N. */
    apiVersion: number;
    environment: "development" | "production";
    methodName: string;
  }

  /** What a method returns. `body`: an object (JSON), a string (text/plain) or bytes (application/octet-stream). */
  interface Response {
    status?: number;
    headers?: Record<string, string>;
    body?: unknown;
  }

  interface Method {
    /** The endpoint `/<name>`: ^[a-z][a-z0-9_]{0,63}$, not the name of a schema. */
    name: string;
    /** The only URL parameters passed in (GET and DELETE). */
    params?: string[];
    // biome-ignore lint/suspicious/noConfusingVoidType: a method may end without returning anything (an empty 200)
    execute(request: Request, services: Services): Response | void | Promise<Response | void>;
  }

  /** What a job's run is called with. Frozen. */
  interface Job {
    name: string;
    /** The scheduled time this run is for (a manual run: when it was asked for), ISO 8601 in UTC. */
    occurrence: string;
    /** "schedule"; "manual" (Run now in the console, POST /_admin/api/jobs/<name>/run); "missed": once for occurrences that passed while no node ran (code.jobs.missed = "run once"). */
    trigger: "schedule" | "manual" | "missed";
    /** The run's id in the job's history. */
    run: string;
  }

  /** One entry of the `jobs` export: `export const jobs: Burrow.JobDefinition[] = [...]`. */
  interface JobDefinition {
    /** ^[a-z][a-z0-9_]{0,63}$, unique in the module. */
    name: string;
    /** Five cron fields (minute hour day-of-month month day-of-week, names such as MON-FRI and JAN allowed) or @hourly, @daily, @weekly, @monthly, @yearly; read in the setting code.timezone. */
    schedule: string;
    /** Wall time of one run, 1 to 900000 ms (15 minutes); default the setting code.timeoutMs. */
    timeoutMs?: number;
    /** Services act as the server (no permission checks). The value returned is ignored; a throw fails the run. */
    run(job: Job, services: Services): unknown;
  }

  /** How the caller of a write authenticated. */
  type AuthKind = "public key" | "mac" | "bearer" | "cookie" | "oauth1" | "private key" | "admin" | "code";
  /**
   * What kind of write it was. "cascade": a change another write made (a deleted user's objects losing their
   * owner, related objects deleted with their parent). The console, custom code (hooks and jobs included) and
   * imports say only that.
   */
  type WriteSource = "api" | "batch" | "save" | "counter" | "relationship" | "query" | "cascade" | "console" | "code" | "import";

  /** What a before-hook is called with. `object` may be changed and returned. */
  interface BeforeChange<T = StoredObject> {
    event: "beforeCreate" | "beforeUpdate" | "beforeDelete" | "beforeSignup";
    schema: string;
    /** Create: the object as sent (with its key; never a password). Update: the object as it would be stored. Delete: the stored object. */
    object: T;
    /** Update and delete: the stored object; create: null. */
    previous: T | null;
    /** Update: the fields the client sent (`<field>[inc]` for counters). */
    changes?: Record<string, unknown>;
    /** The caller's username, or null. */
    user: string | null;
    auth: AuthKind;
    source: WriteSource;
  }

  /** What an after-hook is called with, once the change is committed (at least once: de-duplicate by `id`). */
  interface AfterChange<T = StoredObject> {
    /** The change's id: unique in the environment, the same on every try. */
    id: number;
    event: "afterCreate" | "afterUpdate" | "afterDelete" | "afterSignup";
    schema: string;
    key: string;
    /** The object as stored after the change (null after a delete); every field, file links as paths. */
    object: T | null;
    /** The object before the change (update, delete), else null. */
    previous: T | null;
    user: string | null;
    auth: AuthKind;
    source: WriteSource;
    /** 1 on the first try. */
    attempt: number;
  }

  /**
   * A before-hook: return nothing to write the object as it is, return an object to write that instead (checked as
   * if the client had sent it; a field left out is cleared), or `throw reject(status, message)` to refuse the write
   * (the client gets that status and `{"error": message}`). A throw of anything else, or running past
   * code.hooks.timeoutMs (2 s), refuses it with 500.
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: a hook may end without returning anything (write as sent)
  type BeforeHook = (change: BeforeChange, services: Services) => StoredObject | void | Promise<StoredObject | void>;
  /** An after-hook: a throw (or a time-out) tries it again later, with a growing delay, up to code.hooks.attempts times. */
  type AfterHook = (change: AfterChange, services: Services) => unknown;

  /** The hooks of one schema; beforeSignup and afterSignup run on user schemas, for accounts the public creates. */
  interface SchemaHooks {
    beforeCreate?: BeforeHook;
    afterCreate?: AfterHook;
    beforeUpdate?: BeforeHook;
    afterUpdate?: AfterHook;
    beforeDelete?: BeforeHook;
    afterDelete?: AfterHook;
    beforeSignup?: BeforeHook;
    afterSignup?: AfterHook;
  }

  /** The `hooks` export: `export const hooks: Burrow.Hooks = { todo: { beforeCreate(change) { ... } } }`. */
  type Hooks = Record<string, SchemaHooks>;

  /** A refusal for a before-hook to throw: the client gets `status` (400-599) and `{"error": message}`. */
  type Reject = (status: number, message: string) => Error;

  interface Services {
    /** The same as the global `reject`. */
    reject: Reject;
    data: DataService;
    push: PushService;
    log: LogService;
    http: HttpService;
    cache: CacheService;
    config: ConfigService;
    live: LiveService;
    mail: MailService;
  }

  // ---------------------------------------------------------------- data

  type Scalar = string | number | boolean;
  /** A condition on one field: a value (equality) or operators, ANDed. Geo radii are in radians (km / 6367.5). */
  type Condition =
    | Scalar
    | {
        eq?: Scalar;
        ne?: Scalar;
        lt?: Scalar;
        lte?: Scalar;
        gt?: Scalar;
        gte?: Scalar;
        in?: Scalar[];
        nin?: Scalar[];
        /** true: the field is null (unset); false: it is set. */
        null?: boolean;
        /** true: the field is the empty string or an empty array. */
        empty?: boolean;
        /** Nearest first, optionally within a radius (radians); results carry the distance. */
        near?: { lat: number; lon: number; radius?: number };
        /** Within a radius (radians) of a point, or within a box (lower-left and upper-right corners). */
        within?: { lat: number; lon: number; radius: number } | { box: [latLL: number, lonLL: number, latUR: number, lonUR: number] };
      };
  /** Conditions on fields, ANDed. */
  type Where = Record<string, Condition>;
  interface Query {
    where?: Where;
    /** Alternatives ORed together (each a Where), ANDed with `where`. */
    or?: Where[];
    /** Fields to return (dotted paths reach into expanded relationships). */
    select?: string[];
    /** Relationship expansion depth, 0 to 3. */
    expand?: number;
    /** "field", "field:desc" or ["field", "desc"]. */
    orderBy?: (string | [string, "asc" | "desc"])[];
    /** First index (0-based) and last index (inclusive), as the Range header. */
    start?: number;
    end?: number;
    /** At most this many objects from `start` (instead of `end`). */
    limit?: number;
  }
  interface Changes {
    /** Fields to set (null unsets). */
    set?: Record<string, unknown>;
    /** Integer fields to add to (whole numbers), atomically. */
    increment?: Record<string, number>;
  }
  interface BatchResult {
    succeeded: string[];
    failed: string[];
  }
  type StoredObject = Record<string, unknown>;

  /** The datastore of the method's environment and API version. Ignores schema permissions. */
  interface DataService {
    create(schema: string, object: Record<string, unknown>): Promise<StoredObject>;
    createMany(schema: string, objects: Record<string, unknown>[]): Promise<BatchResult>;
    /** One object by key, or null. */
    read(schema: string, id: string, shape?: { select?: string[]; expand?: number }): Promise<StoredObject | null>;
    query(schema: string, query?: Query): Promise<StoredObject[]>;
    count(schema: string, query?: Pick<Query, "where" | "or">): Promise<number>;
    /** Change one object; with `where`, only if it also matches (conditional update): null when it does not. */
    update(schema: string, id: string, changes: Changes, options?: { where?: Where }): Promise<StoredObject | null>;
    /** Change every object matching the query; how many changed. */
    updateWhere(schema: string, query: Pick<Query, "where" | "or">, changes: Changes): Promise<number>;
    /** Delete one object; false when there was none. */
    delete(schema: string, id: string): Promise<boolean>;
    /** Delete every object matching the query; how many. */
    deleteWhere(schema: string, query: Pick<Query, "where" | "or">): Promise<number>;
    /** Append keys to a relationship field (an object need not exist for a key yet), or values to an array field. */
    addRelated(schema: string, id: string, field: string, values: Scalar[]): Promise<StoredObject>;
    /** Create objects in the related schema and append their keys to the relationship field. */
    createRelated(schema: string, id: string, field: string, objects: Record<string, unknown>[]): Promise<BatchResult>;
    /** Remove keys (or values) from a field; with cascade, delete the related objects too. */
    removeRelated(schema: string, id: string, field: string, values: Scalar[], options?: { cascade?: boolean }): Promise<void>;
    /** The names of the schemas this API version has. */
    schemas(): Promise<string[]>;
    /** The name of the user schema, or null when there is none. */
    userSchema(): Promise<string | null>;
  }

  // ---------------------------------------------------------------- push

  type TokenType = "ios" | "android" | "web";
  interface Token {
    type: TokenType;
    token: string;
  }
  /** Payload: { alert|message, badge, sound, ...custom data } as the push API takes it. */
  type Payload = Record<string, unknown>;
  interface PushService {
    registerToken(user: string | null, token: Token): Promise<void>;
    sendToTokens(tokens: Token[], payload: Payload): Promise<{ queued: number }>;
    sendToUsers(users: string[], payload: Payload): Promise<{ queued: number }>;
    broadcast(payload: Payload): Promise<{ queued: number }>;
    tokensOfUsers(users: string[]): Promise<Record<string, Token[]>>;
    /** false when the token was not registered. */
    removeToken(token: Token): Promise<boolean>;
    /** Tokens the providers refused; `clear` empties the list after reading. */
    expiredTokens(clear: boolean): Promise<(Token & { expired: number })[]>;
  }

  // ---------------------------------------------------------------- log, http, cache, config

  /** Lines kept per environment, read with GET /_admin/api/logs?source=code. */
  interface LogService {
    debug(message: string, details?: unknown): Promise<void>;
    info(message: string, details?: unknown): Promise<void>;
    warn(message: string, details?: unknown): Promise<void>;
    error(message: string, details?: unknown): Promise<void>;
  }

  interface HttpOptions {
    headers?: Record<string, string>;
    /** Default 10 000, at most the time the call has left. */
    timeoutMs?: number;
    /** Bytes of the answer kept (default and maximum: the setting code.http.maxResponseBytes). */
    maxBytes?: number;
  }
  interface HttpResponse {
    status: number;
    headers: Record<string, string>;
    /** The body as UTF-8 text. */
    body: string;
    /** True when the body was cut at maxBytes. */
    truncated: boolean;
  }
  /**
   * Outbound HTTP(S). Loopback, private, link-local and metadata addresses are refused after DNS resolution
   * (redirects included, at most 5 followed) unless the setting code.http.allowPrivate is on.
   */
  interface HttpService {
    get(url: string, options?: HttpOptions): Promise<HttpResponse>;
    delete(url: string, options?: HttpOptions): Promise<HttpResponse>;
    post(url: string, body: string, options?: HttpOptions): Promise<HttpResponse>;
    put(url: string, body: string, options?: HttpOptions): Promise<HttpResponse>;
  }

  /** A key/value cache per environment: keys up to 1 KiB, values up to 16 KiB (UTF-8). */
  interface CacheService {
    get(key: string): Promise<string | null>;
    /** ttlMs <= 0 or omitted: the longest TTL (1 day). */
    set(key: string, value: string, ttlMs?: number): Promise<void>;
    delete(key: string): Promise<boolean>;
  }

  /** Read-only variables from the environment's settings (code.config), e.g. third-party API keys. */
  // ---------------------------------------------------------------- live

  /** Ephemeral messages to live streams (docs/api/live.md): nothing is stored, a stream not connected misses them. */
  interface LiveService {
    /**
     * Send `data` (any JSON, at most 64 KB) on a channel: "user:<username>" reaches that user's streams,
     * "public:<name>" the streams that joined it. They receive `event: message` with {"channel", "data"}.
     */
    publish(channel: string, data: unknown): Promise<void>;
  }

  interface ConfigService {
    get(key: string): Promise<string | null>;
  }

  // ---------------------------------------------------------------- mail

  interface MailMessage {
    /** One plain address (ann@example.com, no display name), or 1 to 50 of them: one message, all in To. */
    to: string | string[];
    /** One line, at most 998 characters. */
    subject: string;
    /** At least one of text and html; together at most 1 MB (UTF-8). */
    text?: string;
    html?: string;
  }
  /**
   * Mail through the environment's SMTP server (settings smtp.*), or into the outbox (GET /_admin/api/outbox) when
   * no SMTP host is set. At most code.mail.perHour recipients an hour per environment; past it the promise rejects.
   */
  interface MailService {
    /** Resolves with the outbox entry's id and whether the mail went out ("smtp") or was kept ("outbox"). */
    send(message: MailMessage): Promise<{ id: string; via: "smtp" | "outbox" }>;
  }
}

/** Refuse a write from a before-hook: `throw reject(422, "a title is needed")`. */
declare const reject: Burrow.Reject;
