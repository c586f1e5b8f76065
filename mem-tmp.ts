import { heapStats } from "bun:jsc";
import { makeTestApp } from "./tests/helpers/app.ts";
import { readFirstLine } from "./scripts/bench/env.ts";
const fakesProc = Bun.spawn(["taskset", "-c", "1", process.execPath, "scripts/bench/push-fakes.ts"], { stdin: "pipe", stdout: "pipe", stderr: "inherit" });
const fakes = JSON.parse(await readFirstLine(fakesProc.stdout as any));
const t = await makeTestApp();
const push = { apns: { url: fakes.apns.url, topic: fakes.apns.topic, keyP8: fakes.apns.keyP8, keyId: fakes.apns.keyId, teamId: fakes.apns.teamId, ca: fakes.apns.ca }, fcm: { url: fakes.fcm.url, serviceAccount: fakes.fcm.serviceAccount }, web: { vapidPublicKey: fakes.web.vapidPublicKey, vapidPrivateKey: fakes.web.vapidPrivateKey, subject: "mailto:b@example.com", allowPrivateEndpoints: true } };
await t.admin("PUT", "/settings/development", { push });
const db = t.services.envDbs.development;
const N = Number(process.env.N ?? 100000);
const kind = process.env.KIND ?? "ios";
const stmts = [];
for (let i = 0; i < N; i++) {
  const tok = kind === "ios" ? i.toString(16).padStart(64, "0") : kind === "web" ? JSON.stringify({ endpoint: `${fakes.web.url}/push/${i.toString(16).padStart(24, "0")}`, keys: { p256dh: fakes.web.p256dh, auth: fakes.web.auth } }) : `a-${i}`;
  stmts.push({ sql: "INSERT INTO _burrow_push_tokens (type, token, user, created) VALUES (?, ?, ?, ?)", args: [kind === "android" ? "androidgcm" : kind, tok, `u${i}`, 1] });
}
await db.batch(stmts, "write");
stmts.length = 0;
Bun.gc(true);
const rss = () => (process.memoryUsage().rss / 1048576).toFixed(0);
const h0 = heapStats();
console.log("before", rss(), "MB heap", (h0.heapSize / 1048576).toFixed(0));
const stop = t.services.push.start();
await t.services.push.send("development", { kind: "broadcast" }, { message: "x" });
for (;;) { const s = await t.services.push.queue("development").stats(); if (s.depth === 0) break; await Bun.sleep(200); }
console.log("after", rss(), "MB");
Bun.gc(true);
const h = heapStats();
console.log("after gc", rss(), "MB heap", (h.heapSize / 1048576).toFixed(0), "objects", h.objectCount);
const top = Object.entries(h.objectTypeCounts).sort((a, b) => b[1] - a[1]).slice(0, 12);
const top0 = h0.objectTypeCounts;
console.log(top.map(([k, v]) => `${k}:${v}(${v - (top0[k] ?? 0)})`).join(" "));
await stop();
await t.close();
fakesProc.stdin.end();
process.exit(0);
