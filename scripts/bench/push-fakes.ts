// The push providers for scripts/bench/push.ts, in their own process so their CPU is not the driver's: the
// loopback APNs (HTTP/2 + TLS, JWT checked), FCM (OAuth2 token + messages:send) and Web Push (VAPID checked,
// every payload decrypted) fakes from tests/helpers, counting deliveries per platform instead of recording them.
// Prints one JSON line with the credentials and URLs, then serves GET /stats (counts) and POST /reset on a
// loopback control port until stdin closes.

import { makeApnsTestPki, startApnsFake, TEST_TOPIC } from "../../tests/helpers/apns-fake.ts";
import { startFcmFake } from "../../tests/helpers/fcm-fake.ts";
import { startWebPushFake } from "../../tests/helpers/web-push-fake.ts";
import { generateVapidKeys } from "../../src/push/providers/web-push.ts";

/** Deliveries of one platform: total, distinct devices, repeats with the first copy's id or with another id. */
class Tally {
  first = new Map<string, string>();
  deliveries = 0;
  sameIdRepeats = 0;
  otherIdRepeats = 0;
  firstAt = 0;
  lastAt = 0;
  add(device: string, id: string): void {
    const now = performance.now();
    if (this.deliveries++ === 0) this.firstAt = now;
    this.lastAt = now;
    const seen = this.first.get(device);
    if (seen === undefined) this.first.set(device, id);
    else if (seen === id) this.sameIdRepeats++;
    else this.otherIdRepeats++;
  }
  json() {
    return {
      deliveries: this.deliveries,
      devices: this.first.size,
      sameIdRepeats: this.sameIdRepeats,
      otherIdRepeats: this.otherIdRepeats,
      firstAt: this.firstAt,
      lastAt: this.lastAt,
    };
  }
}

let tallies = { ios: new Tally(), android: new Tally(), web: new Tally() };
const pki = makeApnsTestPki();
// BENCH_PROVIDER_DELAY_MS: every fake answers this much later, standing in for a provider across the internet.
const delayMs = Math.max(0, Number(process.env.BENCH_PROVIDER_DELAY_MS ?? 0) || 0);
const apns = await startApnsFake(pki, { delayMs, onDelivery: (token, id) => tallies.ios.add(token, id) });
const fcm = await startFcmFake({ onDelivery: (token, collapse) => tallies.android.add(token, collapse) });
const vapid = generateVapidKeys();
const web = startWebPushFake(vapid.publicKey, { sharedKeys: true, onDelivery: (id, topic) => tallies.web.add(id, topic ?? "") });
fcm.delayMs = delayMs;
web.delayMs = delayMs;
const sample = JSON.parse(web.subscribe().token) as { keys: { p256dh: string; auth: string } };

const control = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch(req) {
    const path = new URL(req.url).pathname;
    if (path === "/stats")
      return Response.json({
        now: performance.now(),
        ios: tallies.ios.json(),
        android: tallies.android.json(),
        web: tallies.web.json(),
        webRejections: web.rejections.length,
        fcmRejections: fcm.rejections.length,
      });
    if (path === "/reset" && req.method === "POST") {
      tallies = { ios: new Tally(), android: new Tally(), web: new Tally() };
      return Response.json({ ok: true });
    }
    return new Response("not found", { status: 404 });
  },
});

process.stdout.write(
  `${JSON.stringify({
    control: `http://127.0.0.1:${control.port}`,
    apns: { url: apns.url, ca: pki.caPem, keyP8: pki.p8.pem, keyId: pki.p8.keyId, teamId: pki.p8.teamId, topic: TEST_TOPIC },
    fcm: { url: fcm.url, serviceAccount: fcm.account.json },
    web: {
      url: web.url,
      vapidPublicKey: vapid.publicKey,
      vapidPrivateKey: vapid.privateKey,
      p256dh: sample.keys.p256dh,
      auth: sample.keys.auth,
    },
  })}\n`,
);

// Until the driver closes stdin (or dies).
for await (const _ of Bun.stdin.stream()) {
}
await apns.close();
fcm.stop();
web.stop();
control.stop(true);
process.exit(0);
