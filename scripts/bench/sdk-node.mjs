// The Node side of scripts/bench/sdk.ts: imports the client module the server served (a file path in argv), then
// measures, for a bounded time each, signed GET by key through the client and through raw fetch with the same MAC
// signing (node:crypto), in alternating rounds at the same concurrency; then the time from a write's answer to the
// client's live callback. Prints one JSON line.
import { createHmac, randomBytes } from "node:crypto";

const [modulePath, url, publicKey, idsJson, secondsArg, roundsArg] = process.argv.slice(2);
const { connect } = await import(modulePath);
const ids = JSON.parse(idsJson);
const seconds = Number(secondsArg);
const rounds = Number(roundsArg);
const C = 50;

const b = connect({ url, publicKey, version: 0 });
await b.users.login({ username: "bench", password: "bench-password-1" });
const raw = await (
  await fetch(`${url}/user/accessToken`, {
    method: "POST",
    headers: { "x-service-api-key": publicKey, "content-type": "application/x-www-form-urlencoded" },
    body: "username=bench2&password=bench-password-1&token_type=mac",
  })
).json();
const u = new URL(url);
const port = u.port || "80";
const bench = b.schema("bench");

async function loop(one) {
  let n = 0;
  let failed = 0;
  const until = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: C }, async () => {
      while (performance.now() < until) {
        try {
          await one(ids[n++ % ids.length]);
        } catch {
          failed++;
        }
      }
    }),
  );
  return { rps: n / ((performance.now() - started) / 1000), failed };
}

const viaClient = (id) => bench.get(id);
const viaFetch = async (id) => {
  const path = `/bench/${id}`;
  const ts = Math.floor(Date.now() / 1000);
  const nonce = randomBytes(8).toString("hex");
  const mac = createHmac("sha1", raw.mac_key).update(`${ts}\n${nonce}\nGET\n${path}\n${u.hostname}\n${port}\n\n`).digest("base64");
  const r = await fetch(`${url}${path}`, {
    headers: {
      "x-service-api-key": publicKey,
      accept: "application/vnd.service+json; version=0",
      authorization: `MAC id="${raw.access_token}",ts="${ts}",nonce="${nonce}",mac="${mac}"`,
    },
  });
  if (!r.ok) throw new Error(String(r.status));
  return r.json();
};

// Warm both paths, then alternate.
await loop(viaClient);
await loop(viaFetch);
const results = { client: [], fetch: [] };
for (let i = 0; i < rounds; i++) {
  const order = i % 2 === 0 ? ["client", "fetch"] : ["fetch", "client"];
  for (const k of order) results[k].push(await loop(k === "client" ? viaClient : viaFetch));
}

// Live: the time from a write's answer to the callback, over 50 writes one after the other.
const delays = [];
let waiting = null;
const off = bench.subscribe({ where: { title: "live" } }, (e) => {
  if (e.type === "create" && waiting) waiting(performance.now());
});
await off.ready;
for (let i = 0; i < 50; i++) {
  const heard = new Promise((resolve) => (waiting = resolve));
  await bench.create({ title: "live", n: i });
  const acked = performance.now();
  const at = await Promise.race([heard, new Promise((r) => setTimeout(() => r(null), 5000))]);
  if (at !== null) delays.push(at - acked);
  await new Promise((r) => setTimeout(r, 20));
}
await off();
console.log(JSON.stringify({ results, delays }));
process.exit(0);
