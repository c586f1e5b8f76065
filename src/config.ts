// Boot configuration: one table of options (flag > BURROW_* environment variable > default),
// parsed and validated up front into a frozen Config. `--help` text is printed from the same table.

import { resolve } from "node:path";
import { parseCidr, type Cidr } from "./net/ip.ts";
import { NAMESPACE_PATTERN, type StoreLocation } from "./db/open-store.ts";

export class ConfigError extends Error {}

interface ListenAddress {
  host: string;
  port: number;
}

export interface Config {
  dir: string;
  /** Where system, development and production live: files in `dir`, or a libSQL server (--store). */
  store: StoreLocation;
  http: ListenAddress;
  /** A second listener serving the push API at its root (--push-http), or null. */
  pushHttp: ListenAddress | null;
  publicUrl: string | null;
  /**
   * A separate origin for stored files (--files-url): file links use it, and requests addressed to its host are
   * answered only under /_files/, so an uploaded file never runs on the API's or the console's origin.
   */
  filesUrl: string | null;
  trustedProxy: Cidr[];
  bodyLimit: number;
  infer: boolean;
  logLevel: "error" | "warn" | "info" | "debug";
  /** Log lines as text (default) or one JSON object per line. */
  logFormat: "text" | "json";
  /** Load shedding (src/http/admission.ts): the event loop lag that starts it (0: off) and the cap on requests in flight. */
  shedding: { targetMs: number; maxInFlight: number };
  /** GET /_metrics (Prometheus text format): off unless enabled; with a token, it needs `Authorization: Bearer <token>`. */
  metrics: { enabled: boolean; token: string | null };
  /** The status page's figures need an admin's token (the page itself stays public). */
  statusAdminOnly: boolean;
  keys: {
    development: { publicKey?: string; privateKey?: string };
    production: { publicKey?: string; privateKey?: string };
  };
  admin: { email: string; password: string } | null;
}

interface Option {
  key: string;
  flag?: string;
  env: string;
  default: string;
  help: string;
  /** boolean flags take no value (`--no-infer`). */
  boolean?: boolean;
}

/** Every option Burrow reads at boot. Flags win over environment variables, which win over defaults. */
const OPTIONS: readonly Option[] = [
  {
    key: "dir",
    flag: "--dir",
    env: "BURROW_DIR",
    default: "./burrow_data",
    help: "data directory (system.db, development.db, production.db, files/)",
  },
  {
    key: "store",
    flag: "--store",
    env: "BURROW_STORE",
    default: "",
    help: "a libSQL server (sqld with --enable-namespaces) holding the databases: http://, https:// or libsql:// URL (default: files in --dir)",
  },
  {
    key: "storeNamespace",
    flag: "--store-namespace",
    env: "BURROW_STORE_NAMESPACE",
    default: "burrow",
    help: "with --store: namespaces <this>-system, <this>-development, <this>-production",
  },
  {
    key: "storeAdmin",
    flag: "--store-admin",
    env: "BURROW_STORE_ADMIN_URL",
    default: "",
    help: "with --store: sqld's admin API URL, to create missing namespaces at start",
  },
  { key: "storeAuthToken", env: "BURROW_STORE_AUTH_TOKEN", default: "", help: "with --store: the libSQL server's auth token (JWT)" },
  {
    key: "http",
    flag: "--http",
    env: "BURROW_HTTP",
    default: "127.0.0.1:8080",
    help: "listen address host:port (port 0 picks a free port)",
  },
  {
    key: "pushHttp",
    flag: "--push-http",
    env: "BURROW_PUSH_HTTP",
    default: "",
    help: "also serve the push API (/_push/...) at the root of a second listener host:port (default off)",
  },
  {
    key: "publicUrl",
    flag: "--public-url",
    env: "BURROW_PUBLIC_URL",
    default: "",
    help: "external base URL of the API, used in file links (default: the origin each request addressed)",
  },
  {
    key: "filesUrl",
    flag: "--files-url",
    env: "BURROW_FILES_URL",
    default: "",
    help: "a separate origin for file links, e.g. https://files.example.com pointing at this server; requests to its host are served only under /_files/ (the strongest isolation of uploads)",
  },
  {
    key: "trustedProxy",
    flag: "--trusted-proxy",
    env: "BURROW_TRUSTED_PROXY",
    default: "",
    help: "comma-separated IPs/CIDRs whose X-Forwarded-* headers are believed",
  },
  {
    key: "bodyLimit",
    flag: "--body-limit",
    env: "BURROW_BODY_LIMIT",
    default: "32mb",
    help: "largest accepted request body (e.g. 512kb, 32mb); larger bodies get 413",
  },
  {
    key: "shedTargetMs",
    flag: "--shed-target-ms",
    env: "BURROW_SHED_TARGET_MS",
    default: "20",
    help: "overload: while the event loop runs this many ms late, a share of ordinary requests gets 503 with Retry-After (sign-in, tokens and the admin API never); 0 turns shedding off",
  },
  {
    key: "maxInFlight",
    flag: "--max-in-flight",
    env: "BURROW_MAX_IN_FLIGHT",
    default: "2000",
    help: "overload: ordinary requests being answered at once past which new ones get 503 with Retry-After",
  },
  {
    key: "noInfer",
    flag: "--no-infer",
    env: "BURROW_NO_INFER",
    default: "false",
    help: "turn off schema inference in development",
    boolean: true,
  },
  { key: "logLevel", flag: "--log-level", env: "BURROW_LOG_LEVEL", default: "info", help: "error, warn, info or debug" },
  {
    key: "logFormat",
    flag: "--log-format",
    env: "BURROW_LOG_FORMAT",
    default: "text",
    help: "text, or json (one object per line: time, level, msg and fields)",
  },
  {
    key: "metrics",
    flag: "--metrics",
    env: "BURROW_METRICS",
    default: "false",
    help: "serve GET /_metrics in the Prometheus text format",
    boolean: true,
  },
  {
    key: "statusAdminOnly",
    flag: "--status-admin-only",
    env: "BURROW_STATUS_ADMIN_ONLY",
    default: "false",
    help: "the status page (/_status) shows its figures to signed-in admins only",
    boolean: true,
  },
  { key: "metricsToken", env: "BURROW_METRICS_TOKEN", default: "", help: "require Authorization: Bearer <this token> on /_metrics" },
  { key: "devPublicKey", env: "BURROW_DEV_PUBLIC_KEY", default: "", help: "pin the development public key" },
  { key: "devPrivateKey", env: "BURROW_DEV_PRIVATE_KEY", default: "", help: "pin the development private key" },
  { key: "prodPublicKey", env: "BURROW_PROD_PUBLIC_KEY", default: "", help: "pin the production public key" },
  { key: "prodPrivateKey", env: "BURROW_PROD_PRIVATE_KEY", default: "", help: "pin the production private key" },
  { key: "adminEmail", env: "BURROW_ADMIN_EMAIL", default: "", help: "create or update this admin at start (with BURROW_ADMIN_PASSWORD)" },
  { key: "adminPassword", env: "BURROW_ADMIN_PASSWORD", default: "", help: "password of BURROW_ADMIN_EMAIL (at least 8 characters)" },
];

export const CONFIG_FLAGS = new Set(OPTIONS.filter((o) => o.flag).map((o) => o.flag!));
export const BOOLEAN_FLAGS = new Set(OPTIONS.filter((o) => o.boolean).map((o) => o.flag!));

/** Merge flags, environment and defaults; throws ConfigError with one clear line on bad input. */
export function loadConfig(flags: Record<string, string | boolean>, env: Record<string, string | undefined>): Config {
  const raw: Record<string, string> = {};
  for (const o of OPTIONS) {
    const fromFlag = o.flag === undefined ? undefined : flags[o.flag];
    const fromEnv = env[o.env];
    if (fromFlag !== undefined) raw[o.key] = o.boolean ? String(fromFlag !== false) : String(fromFlag);
    else if (fromEnv !== undefined && fromEnv !== "") raw[o.key] = fromEnv;
    else raw[o.key] = o.default;
  }
  const name = (key: string) => {
    const o = OPTIONS.find((x) => x.key === key)!;
    return o.flag ?? o.env;
  };
  const fail = (key: string, why: string): never => {
    throw new ConfigError(`invalid ${name(key)} "${raw[key]}": ${why}`);
  };

  let storeUrl: string | null = null;
  if (raw.store) {
    const u = urlOf(raw.store);
    if (!u || !["http:", "https:", "libsql:"].includes(u.protocol) || u.username || u.password)
      fail(
        "store",
        "expected a libSQL server URL such as http://127.0.0.1:8081 or libsql://db.example.com (the token goes in BURROW_STORE_AUTH_TOKEN)",
      );
    storeUrl = raw.store;
  }
  if (!NAMESPACE_PATTERN.test(raw.storeNamespace!)) fail("storeNamespace", "1-48 characters of A-Z a-z 0-9 _ -");
  let storeAdmin: string | null = null;
  if (raw.storeAdmin) {
    const u = urlOf(raw.storeAdmin);
    if (!u || (u.protocol !== "http:" && u.protocol !== "https:"))
      fail("storeAdmin", "expected sqld's admin API URL, e.g. http://127.0.0.1:8082");
    storeAdmin = raw.storeAdmin;
  }
  const http = parseListen(raw.http!) ?? fail("http", "expected host:port, e.g. 127.0.0.1:8080");
  const pushHttp = raw.pushHttp ? (parseListen(raw.pushHttp) ?? fail("pushHttp", "expected host:port, e.g. 127.0.0.1:8081")) : null;
  if (pushHttp && http.port !== 0 && pushHttp.port === http.port && pushHttp.host === http.host)
    fail("pushHttp", "it must differ from --http");
  let publicUrl: string | null = null;
  if (raw.publicUrl) {
    const u = urlOf(raw.publicUrl);
    if (!u || (u.protocol !== "http:" && u.protocol !== "https:") || u.search || u.hash)
      fail("publicUrl", "expected an http(s) URL such as https://api.example.com");
    publicUrl = raw.publicUrl.replace(/\/+$/, "");
  }
  let filesUrl: string | null = null;
  if (raw.filesUrl) {
    const u = urlOf(raw.filesUrl) ?? fail("filesUrl", "expected an origin such as https://files.example.com");
    if ((u.protocol !== "http:" && u.protocol !== "https:") || u.search || u.hash || u.username || u.password || u.pathname !== "/")
      fail("filesUrl", "expected an origin such as https://files.example.com (scheme, host and port only)");
    filesUrl = u.origin;
    if (publicUrl !== null && new URL(publicUrl).host === u.host) fail("filesUrl", "it must be another host than --public-url's");
  }
  const trustedProxy: Cidr[] = [];
  for (const part of raw
    .trustedProxy!.split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    trustedProxy.push(parseCidr(part) ?? fail("trustedProxy", `"${part}" is not an IP address or CIDR`));
  }
  const bodyLimit = parseSize(raw.bodyLimit!) ?? fail("bodyLimit", "expected a size such as 512kb or 32mb (at least 1kb)");
  const noInfer = parseBool(raw.noInfer!) ?? fail("noInfer", "expected true or false");
  const shedTargetMs = /^\d{1,5}$/.test(raw.shedTargetMs!)
    ? Number(raw.shedTargetMs)
    : fail("shedTargetMs", "expected milliseconds (0 turns shedding off)");
  const maxInFlight =
    /^\d{1,7}$/.test(raw.maxInFlight!) && Number(raw.maxInFlight) >= 1
      ? Number(raw.maxInFlight)
      : fail("maxInFlight", "expected a whole number of at least 1");
  const logLevel = raw.logLevel!;
  if (!["error", "warn", "info", "debug"].includes(logLevel)) fail("logLevel", "expected error, warn, info or debug");
  const logFormat = raw.logFormat!;
  if (logFormat !== "text" && logFormat !== "json") fail("logFormat", "expected text or json");
  const metrics = parseBool(raw.metrics!) ?? fail("metrics", "expected true or false");
  const statusAdminOnly = parseBool(raw.statusAdminOnly!) ?? fail("statusAdminOnly", "expected true or false");
  const metricsToken = raw.metricsToken!;
  if (metricsToken && !/^[\x21-\x7e]{16,256}$/.test(metricsToken)) fail("metricsToken", "16-256 printable characters without spaces");

  const keys: Config["keys"] = { development: {}, production: {} };
  const keyOpts: [string, "development" | "production", "publicKey" | "privateKey"][] = [
    ["devPublicKey", "development", "publicKey"],
    ["devPrivateKey", "development", "privateKey"],
    ["prodPublicKey", "production", "publicKey"],
    ["prodPrivateKey", "production", "privateKey"],
  ];
  for (const [key, envName, kind] of keyOpts) {
    const v = raw[key]!;
    if (!v) continue;
    if (!/^[A-Za-z0-9._~-]{8,128}$/.test(v)) fail(key, "keys are 8-128 characters of A-Z a-z 0-9 . _ ~ -");
    keys[envName][kind] = v;
  }
  const pinned = [keys.development.publicKey, keys.development.privateKey, keys.production.publicKey, keys.production.privateKey].filter(
    Boolean,
  );
  if (new Set(pinned).size !== pinned.length) throw new ConfigError("invalid BURROW_*_KEY: the four keys must all differ");

  let admin: Config["admin"] = null;
  if (raw.adminEmail || raw.adminPassword) {
    if (!raw.adminEmail || !raw.adminPassword) throw new ConfigError("BURROW_ADMIN_EMAIL and BURROW_ADMIN_PASSWORD must be set together");
    if (!isEmail(raw.adminEmail)) fail("adminEmail", "not an email address");
    if (raw.adminPassword.length < 8) throw new ConfigError("invalid BURROW_ADMIN_PASSWORD: at least 8 characters");
    admin = { email: raw.adminEmail.toLowerCase(), password: raw.adminPassword };
  }

  const dir = resolve(raw.dir!);
  return Object.freeze({
    dir,
    store: Object.freeze({
      dir,
      url: storeUrl,
      authToken: raw.storeAuthToken || null,
      namespace: raw.storeNamespace!,
      adminUrl: storeAdmin,
    }),
    http,
    pushHttp,
    publicUrl,
    filesUrl,
    trustedProxy,
    bodyLimit,
    infer: !noInfer,
    logLevel: logLevel as Config["logLevel"],
    logFormat: logFormat as Config["logFormat"],
    metrics: { enabled: metrics || metricsToken !== "", token: metricsToken || null },
    shedding: Object.freeze({ targetMs: shedTargetMs, maxInFlight }),
    statusAdminOnly,
    keys,
    admin,
  });
}

/** The URL `s` names, or null when it is not one. */
function urlOf(s: string): URL | null {
  try {
    return new URL(s);
  } catch {
    return null;
  }
}

export function parseListen(s: string): ListenAddress | null {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]\s]*)):(\d{1,5})$/.exec(s) ?? /^()()(\d{1,5})$/.exec(s);
  if (!m) return null;
  const port = Number(m[3]);
  if (port > 65535) return null;
  const host = m[1] || m[2] || "127.0.0.1";
  if (!/^[A-Za-z0-9.:-]+$/.test(host)) return null;
  return { host, port };
}

export function parseSize(s: string): number | null {
  const m = /^(\d+(?:\.\d+)?)\s*(b|kb|k|mb|m|gb|g)?$/i.exec(s.trim());
  if (!m) return null;
  const unit = (m[2] ?? "b").toLowerCase()[0]!;
  const mult = unit === "k" ? 1024 : unit === "m" ? 1024 ** 2 : unit === "g" ? 1024 ** 3 : 1;
  const n = Math.floor(Number(m[1]) * mult);
  return n >= 1024 && n <= 4 * 1024 ** 3 ? n : null;
}

function parseBool(s: string): boolean | null {
  const v = s.toLowerCase();
  if (["1", "true", "yes", "on"].includes(v)) return true;
  if (["0", "false", "no", "off", ""].includes(v)) return false;
  return null;
}

export function isEmail(s: string): boolean {
  return s.length <= 254 && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(s);
}

/** The configuration table as help text. */
export function configHelp(): string {
  const rows = OPTIONS.map((o) => {
    const left = o.flag ? `${o.flag}${o.boolean ? "" : " <value>"}` : "";
    return `  ${left.padEnd(24)} ${o.env.padEnd(24)} ${o.help}${o.default && !o.boolean ? ` (default ${o.default})` : ""}`;
  });
  return ["Options (flag > environment variable > default):", ...rows].join("\n");
}
