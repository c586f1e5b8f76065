// Parse's `_Installation` class as Burrow push tokens, so a migrated app keeps its push audience. Either export
// shape (REST/dashboard objects with a `{"__type": "Pointer", "className": "_User"}` in `user` or another field;
// mongoexport documents with `_p_<field>: "_User$<objectId>"`). `deviceType` picks the token type: ios, osx, tvos
// and visionos are `ios`; android (pushType gcm, fcm or none) is `androidgcm`; web is `web` for a Web Push
// subscription and `androidgcm` for an FCM web registration token; other types have no provider and are skipped.
// The deviceToken is normalized as the push API would, and the user is the username the import gave that `_User`.
// installationToken is pure; importInstallations registers the tokens (the import's user binding wins) and counts.

import type { TokenStore } from "../../push/token-store.ts";
import { normalizeToken, type TokenType } from "../../push/tokens.ts";

type Raw = Record<string, unknown>;

/** One installation as a push token, or why it has none. `danglingUser`: it named a `_User` the import does not know. */
export type InstallationToken = { type: TokenType; token: string; user: string | null; danglingUser?: true } | { skip: string };

/** What importing the installations did, for the terminal report. */
export interface InstallationReport {
  /** Distinct push tokens registered, per type. */
  imported: Record<TokenType, number>;
  /** Of those, how many are bound to a user of the import. */
  bound: number;
  /** Of those, how many named a `_User` that is not in the import (registered without a user). */
  danglingUsers: number;
  /** Installations whose token a later installation of the input had too (the later one won). */
  duplicates: number;
  /** Installations without a push token, per reason. */
  skipped: Record<string, number>;
}

const APPLE = new Set(["ios", "osx", "tvos", "visionos"]);
const FCM_PUSH_TYPES = new Set(["gcm", "fcm"]);
const BATCH = 500;

function isUserPointer(v: unknown): v is { objectId: string } {
  if (typeof v !== "object" || v === null) return false;
  const p = v as Raw;
  return p.__type === "Pointer" && p.className === "_User" && typeof p.objectId === "string";
}

const mongoUserId = (v: unknown): string | undefined =>
  typeof v === "string" && v.startsWith("_User$") && v.length > 6 ? v.slice(6) : undefined;

/** The objectId of the `_User` an installation names: `user` / `_p_user` first, then any other pointer to `_User`. */
function userIdOf(raw: Raw): string | undefined {
  if (isUserPointer(raw.user)) return raw.user.objectId;
  const direct = mongoUserId(raw._p_user);
  if (direct !== undefined) return direct;
  for (const [field, v] of Object.entries(raw)) {
    if (isUserPointer(v)) return v.objectId;
    const id = field.startsWith("_p_") ? mongoUserId(v) : undefined;
    if (id !== undefined) return id;
  }
  return undefined;
}

/** The token type of a deviceType (and pushType), or why there is none. */
function typeOf(raw: Raw): { type: TokenType | "web-or-fcm" } | { skip: string } {
  const deviceType = typeof raw.deviceType === "string" ? raw.deviceType.toLowerCase() : "";
  if (deviceType === "") return { skip: "no deviceType" };
  if (APPLE.has(deviceType)) return { type: "ios" };
  if (deviceType === "android") {
    const pushType = typeof raw.pushType === "string" ? raw.pushType.toLowerCase() : "";
    if (pushType !== "" && !FCM_PUSH_TYPES.has(pushType)) return { skip: `android pushType ${pushType} has no Burrow push provider` };
    return { type: "androidgcm" };
  }
  if (deviceType === "web") return { type: "web-or-fcm" };
  return { skip: `deviceType ${deviceType} has no Burrow push provider` };
}

/**
 * One `_Installation` object (either shape) as a push token: its type, its normalized token, and the user key
 * (`userKeyOf` maps a `_User` objectId to its username; an unknown one leaves the token without a user and says so).
 */
export function installationToken(raw: Raw, userKeyOf: (objectId: string) => string | undefined): InstallationToken {
  const kind = typeOf(raw);
  if ("skip" in kind) return kind;
  const deviceToken = raw.deviceToken;
  if (deviceToken === undefined || deviceToken === null || deviceToken === "") return { skip: "no deviceToken" };
  // A web installation holds a PushSubscription (JSON) or, from the Firebase JS SDK, an FCM registration token.
  const isSubscription = typeof deviceToken === "object" || (typeof deviceToken === "string" && deviceToken.trimStart().startsWith("{"));
  const type: TokenType = kind.type === "web-or-fcm" ? (isSubscription ? "web" : "androidgcm") : kind.type;
  let token: string;
  try {
    token = normalizeToken(type, deviceToken);
  } catch (e) {
    return { skip: e instanceof Error ? e.message : String(e) };
  }
  const userId = userIdOf(raw);
  if (userId === undefined) return { type, token, user: null };
  const user = userKeyOf(userId);
  return user === undefined ? { type, token, user: null, danglingUser: true } : { type, token, user };
}

/**
 * Register the push tokens of `_Installation` rows, 500 to a write batch, replacing any user binding the
 * database had. A token that several installations share ends as the last one has it.
 */
export async function importInstallations(
  tokens: TokenStore,
  rows: Iterable<Raw> | AsyncIterable<Raw>,
  userKeyOf: (objectId: string) => string | undefined,
): Promise<InstallationReport> {
  const skipped: Record<string, number> = Object.create(null);
  // The final state of each distinct token, to count once it is all written.
  const seen = new Map<string, { type: TokenType; user: "bound" | "dangling" | "none" }>();
  let duplicates = 0;
  let chunk: { type: TokenType; token: string; user: string | null }[] = [];
  for await (const raw of rows) {
    const t = installationToken(raw, userKeyOf);
    if ("skip" in t) {
      skipped[t.skip] = (skipped[t.skip] ?? 0) + 1;
      continue;
    }
    const key = `${t.type}\n${t.token}`;
    if (seen.has(key)) duplicates++;
    seen.set(key, { type: t.type, user: t.user !== null ? "bound" : t.danglingUser ? "dangling" : "none" });
    chunk.push({ type: t.type, token: t.token, user: t.user });
    if (chunk.length >= BATCH) {
      await tokens.registerMany(chunk, true);
      chunk = [];
    }
  }
  await tokens.registerMany(chunk, true);
  const report: InstallationReport = { imported: { ios: 0, androidgcm: 0, web: 0 }, bound: 0, danglingUsers: 0, duplicates, skipped };
  for (const { type, user } of seen.values()) {
    report.imported[type]++;
    if (user === "bound") report.bound++;
    else if (user === "dangling") report.danglingUsers++;
  }
  return report;
}

/** The lines the import prints about installations. */
export function formatInstallationReport(r: InstallationReport): string[] {
  const types = (Object.entries(r.imported) as [TokenType, number][]).filter(([, n]) => n > 0);
  const total = types.reduce((sum, [, n]) => sum + n, 0);
  let line = `installations: ${total} push token${total === 1 ? "" : "s"} imported`;
  if (types.length) line += ` (${types.map(([t, n]) => `${t} ${n}`).join(", ")})`;
  if (r.bound) line += `, ${r.bound} bound to users`;
  if (r.danglingUsers) line += `, ${r.danglingUsers} named a user that is not in the import (kept without a user)`;
  if (r.duplicates) line += `, ${r.duplicates} shared a token with a later installation (the later one won)`;
  const reasons = Object.entries(r.skipped);
  if (reasons.length) {
    const n = reasons.reduce((sum, [, c]) => sum + c, 0);
    const list = reasons.length === 1 ? reasons[0]![0] : reasons.map(([why, c]) => `${why} (${c})`).join(", ");
    line += `; skipped ${n}: ${list}`;
  }
  return [line];
}
