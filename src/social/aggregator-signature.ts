// The aggregator's user signature (the original: Gigya's UIDSignature): Base64(HMAC-SHA1(key = the Base64-decoded
// partner secret, message = "<timestamp>_<uid>")), the timestamp in Unix seconds and recent. Pure: the replay
// check (a signature accepted once is refused after) needs storage and is the caller's.

import { createHmac } from "node:crypto";
import { base64DigestEquals } from "../auth/mac.ts";

/** How far the signature's timestamp may be from now, either way. */
export const AGGREGATOR_WINDOW_SECONDS = 180;

export type AggregatorCheck = { ok: true; timestamp: number } | { ok: false; reason: "malformed" | "stale" | "signature" };

function digest(secretBase64: string, timestamp: string, uid: string): Buffer {
  return createHmac("sha1", Buffer.from(secretBase64, "base64")).update(`${timestamp}_${uid}`, "utf8").digest();
}

/** The signature the aggregator computes (tests and the fake provider sign with it). */
export function aggregatorSignature(secretBase64: string, timestamp: string, uid: string): string {
  return digest(secretBase64, timestamp, uid).toString("base64");
}

/** Check uid, timestamp and signature against the partner secret at `nowMs`, comparing in constant time. */
export function checkAggregatorSignature(args: {
  uid: string;
  timestamp: string;
  signature: string;
  secretBase64: string;
  nowMs: number;
  windowSeconds?: number;
}): AggregatorCheck {
  const { uid, timestamp, signature } = args;
  if (!uid || uid.length > 255 || !/^\d{1,12}$/.test(timestamp) || !signature || signature.length > 64)
    return { ok: false, reason: "malformed" };
  const ts = Number(timestamp);
  if (Math.abs(args.nowMs / 1000 - ts) > (args.windowSeconds ?? AGGREGATOR_WINDOW_SECONDS)) return { ok: false, reason: "stale" };
  return base64DigestEquals(signature, digest(args.secretBase64, timestamp, uid))
    ? { ok: true, timestamp: ts }
    : { ok: false, reason: "signature" };
}
