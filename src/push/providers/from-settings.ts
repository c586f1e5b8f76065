// Providers built from an environment's push settings, and the up-front check of those settings (bad
// credentials are a 400 when saved, not a failure at send time). A platform with no credentials has no provider.

import { badRequest } from "../../errors.ts";
import type { PushPlatform, PushProvider } from "../provider.ts";
import { type ApnsConfig, createApnsProvider, validateApnsCredentials } from "./apns.ts";
import { createFcmProvider, validateFcmServiceAccount } from "./fcm.ts";
import { createWebPushProvider, validateVapidKeys, validateVapidSubject } from "./web-push.ts";

/** The `push` part of an environment's settings. */
export interface PushSettings {
  clientSend: boolean;
  concurrency: number;
  apns: { url: string; topic: string; keyP8: string; keyId: string; teamId: string; p12: string; p12Password: string; ca: string };
  fcm: { url: string; serviceAccount: string };
  web: { vapidPublicKey: string; vapidPrivateKey: string; subject: string; allowPrivateEndpoints: boolean };
}

function apnsAuth(a: PushSettings["apns"]): ApnsConfig["auth"] | null {
  if (a.keyP8) return { kind: "token", keyP8: a.keyP8, keyId: a.keyId, teamId: a.teamId };
  if (a.p12) return { kind: "certificate", p12Base64: a.p12, password: a.p12Password };
  return null;
}

/** The provider of one platform, or null when the platform has no credentials. */
export function providerFor(platform: PushPlatform, p: PushSettings): PushProvider | null {
  switch (platform) {
    case "ios": {
      const auth = apnsAuth(p.apns);
      return auth ? createApnsProvider({ url: p.apns.url, topic: p.apns.topic, ca: p.apns.ca || undefined, auth }) : null;
    }
    case "android":
      return p.fcm.serviceAccount
        ? createFcmProvider({ serviceAccount: p.fcm.serviceAccount, url: p.fcm.url, concurrency: p.concurrency })
        : null;
    case "web":
      return p.web.vapidPublicKey && p.web.vapidPrivateKey
        ? createWebPushProvider({
            vapidPublicKey: p.web.vapidPublicKey,
            vapidPrivateKey: p.web.vapidPrivateKey,
            subject: p.web.subject,
            allowPrivateEndpoints: p.web.allowPrivateEndpoints,
            concurrency: p.concurrency,
          })
        : null;
  }
}

/** 400 with the reason when saved push settings could not work. */
export function checkPushSettings(p: PushSettings): void {
  const auth = apnsAuth(p.apns);
  if (auth) {
    if (auth.kind === "token" && (!auth.keyId || !auth.teamId))
      throw badRequest("push.apns: token authentication needs keyId and teamId with keyP8");
    if (!p.apns.topic) throw badRequest("push.apns.topic (the app's bundle id) is required");
    try {
      validateApnsCredentials(auth);
    } catch (e) {
      throw badRequest(`push.apns: ${(e as Error).message}`);
    }
  }
  if (p.apns.url && !/^https?:\/\/[^\s/]+/.test(p.apns.url)) throw badRequest("push.apns.url must be an http(s) base URL");
  if (p.fcm.serviceAccount) {
    try {
      validateFcmServiceAccount(p.fcm.serviceAccount);
    } catch (e) {
      throw badRequest(`push.fcm.serviceAccount: ${(e as Error).message}`);
    }
  }
  if (p.web.vapidPublicKey || p.web.vapidPrivateKey) {
    try {
      validateVapidKeys(p.web.vapidPublicKey, p.web.vapidPrivateKey);
    } catch (e) {
      throw badRequest(`push.web: ${(e as Error).message}`);
    }
  }
  try {
    validateVapidSubject(p.web.subject);
  } catch (e) {
    throw badRequest(`push.web.subject: ${(e as Error).message}`);
  }
}
