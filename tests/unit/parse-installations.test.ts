// Parse `_Installation` objects as Burrow push tokens: each deviceType branch in both export shapes, the user
// pointer wherever it is, tokens that do not normalize, and a (re-)import into a real token store on SQLite.

import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { createECDH, randomBytes } from "node:crypto";
import {
  formatInstallationReport,
  importInstallations,
  type InstallationReport,
  installationToken,
} from "../../src/cli/transfer/parse-installations.ts";
import { type BunSqliteClient, openBunSqliteClient } from "../../src/db/bun-sqlite-client.ts";
import { PUSH_TOKENS_DDL, TokenStore } from "../../src/push/token-store.ts";

const USERS: Record<string, string> = { u1: "ann", u2: "bob" };
const userKeyOf = (id: string) => USERS[id];

const IOS = "<a1b2c3d4 e5f60718 293a4b5c 6d7e8f90>";
const IOS_NORMAL = "a1b2c3d4e5f60718293a4b5c6d7e8f90";
const FCM = "fcm-token:APA91bExample_registration-token";
const pointer = (objectId: string, className = "_User") => ({ __type: "Pointer", className, objectId });

/** A Web Push subscription with a real P-256 key (normalization checks the point). */
function subscription(): { endpoint: string; keys: { p256dh: string; auth: string } } {
  const ecdh = createECDH("prime256v1");
  ecdh.generateKeys();
  return {
    endpoint: "https://fcm.googleapis.com/fcm/send/abc123",
    keys: { p256dh: ecdh.getPublicKey().toString("base64url"), auth: randomBytes(16).toString("base64url") },
  };
}

describe("installationToken: device types", () => {
  test("ios, osx, tvos and visionos are ios tokens, normalized to lower-case hex", () => {
    for (const deviceType of ["ios", "osx", "tvos", "visionos", "iOS"])
      expect(installationToken({ deviceType, deviceToken: IOS }, userKeyOf)).toEqual({ type: "ios", token: IOS_NORMAL, user: null });
  });

  test("android with pushType gcm, fcm or none is androidgcm", () => {
    for (const pushType of ["gcm", "fcm", "FCM", undefined, ""])
      expect(installationToken({ deviceType: "android", pushType, deviceToken: FCM }, userKeyOf)).toEqual({
        type: "androidgcm",
        token: FCM,
        user: null,
      });
  });

  test("android with another pushType is skipped, naming it", () => {
    expect(installationToken({ deviceType: "android", pushType: "ppns", deviceToken: FCM }, userKeyOf)).toEqual({
      skip: "android pushType ppns has no Burrow push provider",
    });
  });

  test("web with a subscription (JSON text or object) is a web token, re-serialized", () => {
    const sub = subscription();
    const expected = JSON.stringify({ endpoint: sub.endpoint, keys: sub.keys });
    const spaced = JSON.stringify({ keys: sub.keys, endpoint: sub.endpoint }, null, 2);
    for (const deviceToken of [spaced, sub])
      expect(installationToken({ deviceType: "web", deviceToken }, userKeyOf)).toEqual({ type: "web", token: expected, user: null });
  });

  test("web with an FCM registration token is androidgcm", () => {
    expect(installationToken({ deviceType: "web", deviceToken: FCM }, userKeyOf)).toEqual({ type: "androidgcm", token: FCM, user: null });
  });

  test("web with a broken subscription is skipped with the reason", () => {
    const r = installationToken({ deviceType: "web", deviceToken: JSON.stringify({ endpoint: "https://x.example" }) }, userKeyOf);
    expect(r).toEqual({ skip: "invalid web push subscription: subscription keys are missing" });
  });

  test("win, winrt, winphone, embedded and other are skipped: no provider", () => {
    for (const deviceType of ["win", "winrt", "winphone", "embedded", "other"])
      expect(installationToken({ deviceType, deviceToken: "abc" }, userKeyOf)).toEqual({
        skip: `deviceType ${deviceType} has no Burrow push provider`,
      });
  });

  test("no deviceType or no deviceToken is skipped", () => {
    expect(installationToken({ deviceToken: IOS }, userKeyOf)).toEqual({ skip: "no deviceType" });
    for (const deviceToken of [undefined, null, ""])
      expect(installationToken({ deviceType: "ios", deviceToken }, userKeyOf)).toEqual({ skip: "no deviceToken" });
  });

  test("a bad iOS token is skipped with normalizeToken's message", () => {
    expect(installationToken({ deviceType: "ios", deviceToken: "not-hex!" }, userKeyOf)).toEqual({
      skip: "an iOS device token is hex (spaces, < and > are removed first)",
    });
  });
});

describe("installationToken: the user", () => {
  test("REST: a _User pointer in user", () => {
    const raw = { objectId: "i1", deviceType: "ios", deviceToken: IOS, user: pointer("u1") };
    expect(installationToken(raw, userKeyOf)).toEqual({ type: "ios", token: IOS_NORMAL, user: "ann" });
  });

  test("REST: a _User pointer in another field, when user is not one", () => {
    const raw = { deviceType: "android", deviceToken: FCM, user: "ann", team: pointer("t1", "Team"), owner: pointer("u2") };
    expect(installationToken(raw, userKeyOf)).toEqual({ type: "androidgcm", token: FCM, user: "bob" });
  });

  test("mongoexport: _p_user, or another _p_ field pointing at _User", () => {
    const base = { _id: "i1", deviceType: "ios", deviceToken: IOS };
    expect(installationToken({ ...base, _p_user: "_User$u2" }, userKeyOf)).toEqual({ type: "ios", token: IOS_NORMAL, user: "bob" });
    expect(installationToken({ ...base, _p_team: "Team$u1", _p_owner: "_User$u1" }, userKeyOf)).toEqual({
      type: "ios",
      token: IOS_NORMAL,
      user: "ann",
    });
  });

  test("a user the import does not know: kept without a user, marked dangling", () => {
    expect(installationToken({ deviceType: "ios", deviceToken: IOS, user: pointer("gone") }, userKeyOf)).toEqual({
      type: "ios",
      token: IOS_NORMAL,
      user: null,
      danglingUser: true,
    });
    expect(installationToken({ deviceType: "ios", deviceToken: IOS, _p_user: "_User$gone" }, userKeyOf)).toEqual({
      type: "ios",
      token: IOS_NORMAL,
      user: null,
      danglingUser: true,
    });
  });
});

describe("importInstallations", () => {
  let db: BunSqliteClient;
  let store: TokenStore;
  beforeEach(async () => {
    db = openBunSqliteClient(":memory:");
    await db.batch(PUSH_TOKENS_DDL, "write");
    store = new TokenStore(db);
  });
  afterEach(() => db.close());

  const rowsOf = async () =>
    (await db.execute("SELECT type, token, user FROM _burrow_push_tokens ORDER BY type, token")).rows.map((r) => ({
      type: r.type as string,
      token: r.token as string,
      user: r.user as string | null,
    }));

  test("registers the tokens with their users (the import's binding wins, the last duplicate wins), idempotently", async () => {
    const web = subscription();
    const webToken = JSON.stringify({ endpoint: web.endpoint, keys: web.keys });
    // A binding already in the database is replaced by the import's; an expired token is alive again.
    await store.register("ios", IOS_NORMAL, "someone-else", false);
    await store.expire("androidgcm", "fcm-b", "gone");
    const installations = [
      { objectId: "i1", deviceType: "ios", deviceToken: IOS, user: pointer("u1") },
      { _id: "i2", deviceType: "android", pushType: "gcm", deviceToken: "fcm-a", _p_user: "_User$u1" },
      { _id: "i3", deviceType: "android", deviceToken: "fcm-b", _p_user: "_User$gone" },
      { objectId: "i4", deviceType: "web", deviceToken: JSON.stringify(web), owner: pointer("u2") },
      { objectId: "i5", deviceType: "winphone", deviceToken: "x" },
      { objectId: "i6", deviceType: "ios" },
      { objectId: "i7", deviceType: "android", deviceToken: "fcm-a", user: pointer("u2") },
      ...Array.from({ length: 1200 }, (_, i) => ({ deviceType: "android", deviceToken: `bulk-${i}` })),
    ];
    const report = await importInstallations(store, installations, userKeyOf);
    const expected: InstallationReport = {
      imported: { ios: 1, androidgcm: 1202, web: 1 },
      bound: 3,
      danglingUsers: 1,
      duplicates: 1,
      skipped: { "deviceType winphone has no Burrow push provider": 1, "no deviceToken": 1 },
    };
    expect(report).toEqual(expected);
    const rows = (await rowsOf()).filter((r) => !String(r.token).startsWith("bulk-"));
    expect(rows).toEqual([
      { type: "androidgcm", token: "fcm-a", user: "bob" },
      { type: "androidgcm", token: "fcm-b", user: null },
      { type: "ios", token: IOS_NORMAL, user: "ann" },
      { type: "web", token: webToken, user: "bob" },
    ]);
    expect(await store.count()).toBe(1204);
    expect(await store.expired(false)).toEqual([]);

    const before = await rowsOf();
    expect(await importInstallations(store, installations, userKeyOf)).toEqual(expected);
    expect(await rowsOf()).toEqual(before);
  });

  test("takes an async iterable (a streamed export) too", async () => {
    async function* stream() {
      yield { deviceType: "ios", deviceToken: IOS, _p_user: "_User$u2" };
    }
    const report = await importInstallations(store, stream(), userKeyOf);
    expect(report.imported).toEqual({ ios: 1, androidgcm: 0, web: 0 });
    expect(await rowsOf()).toEqual([{ type: "ios", token: IOS_NORMAL, user: "bob" }]);
  });
});

describe("formatInstallationReport", () => {
  test("one line: counts per type, bound, dangling users, skipped reasons", () => {
    const r: InstallationReport = {
      imported: { ios: 1, androidgcm: 2, web: 0 },
      bound: 2,
      danglingUsers: 1,
      duplicates: 0,
      skipped: { "deviceType winphone has no Burrow push provider": 1 },
    };
    expect(formatInstallationReport(r)).toEqual([
      "installations: 3 push tokens imported (ios 1, androidgcm 2), 2 bound to users, 1 named a user that is not in the import (kept without a user); skipped 1: deviceType winphone has no Burrow push provider",
    ]);
  });

  test("several skip reasons carry their counts; duplicates are mentioned", () => {
    const r: InstallationReport = {
      imported: { ios: 0, androidgcm: 0, web: 1 },
      bound: 0,
      danglingUsers: 0,
      duplicates: 2,
      skipped: { "no deviceToken": 2, "deviceType win has no Burrow push provider": 1 },
    };
    expect(formatInstallationReport(r)).toEqual([
      "installations: 1 push token imported (web 1), 2 shared a token with a later installation (the later one won); skipped 3: no deviceToken (2), deviceType win has no Burrow push provider (1)",
    ]);
  });
});
