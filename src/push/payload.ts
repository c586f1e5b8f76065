// Push payloads (docs/api/push.md#payloads): validation, the size rule that decides which
// platforms receive a payload, and the shape each platform gets. Pure.

import { badRequest } from "../errors.ts";
import type { PushPlatform } from "./provider.ts";

/** Serialized payloads up to this size reach every platform; up to MAX_BYTES only Android and the web. */
export const IOS_MAX_BYTES = 256;
export const MAX_BYTES = 1024;

const SPECIAL = new Set(["badge", "sound", "alert", "message"]);

/** Check a payload and measure it; 400 for anything no device could receive. */
export function checkPayload(payload: unknown): { payload: Record<string, unknown>; bytes: number } {
  if (typeof payload !== "object" || payload === null || Array.isArray(payload)) throw badRequest("payload must be a JSON object");
  const p = payload as Record<string, unknown>;
  for (const k of ["alert", "message", "sound"] as const)
    if (p[k] !== undefined && typeof p[k] !== "string") throw badRequest(`payload.${k} must be a string`);
  if (p.badge !== undefined && !(typeof p.badge === "number" && Number.isSafeInteger(p.badge)))
    throw badRequest("payload.badge must be an integer");
  const bytes = Buffer.byteLength(JSON.stringify(p));
  if (bytes > MAX_BYTES)
    throw badRequest(`the payload is ${bytes} bytes; at most ${MAX_BYTES} bytes reach any device (${IOS_MAX_BYTES} for iOS)`);
  return { payload: p, bytes };
}

/** The platforms a payload of this size reaches. */
export function platformsFor(bytes: number): PushPlatform[] {
  return bytes <= IOS_MAX_BYTES ? ["ios", "android", "web"] : ["android", "web"];
}

/** The payload as a platform receives it. */
export function shapeFor(platform: PushPlatform, p: Record<string, unknown>): Record<string, unknown> {
  switch (platform) {
    case "ios": {
      const aps: Record<string, unknown> = {};
      const alert = p.message ?? p.alert;
      if (alert !== undefined) aps.alert = alert;
      if (p.badge !== undefined) aps.badge = p.badge;
      if (p.sound !== undefined) aps.sound = p.sound;
      const out: Record<string, unknown> = { aps };
      for (const [k, v] of Object.entries(p)) if (!SPECIAL.has(k) && k !== "aps") out[k] = v;
      return out;
    }
    case "android": {
      // FCM data is a flat map of strings: strings stay, anything else is sent as its JSON text.
      const data: Record<string, string> = {};
      for (const [k, v] of Object.entries(p)) data[k] = typeof v === "string" ? v : JSON.stringify(v);
      return data;
    }
    case "web":
      return p;
  }
}
