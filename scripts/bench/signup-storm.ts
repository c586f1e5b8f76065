// A sign-up flood for scripts/bench/signup-flood.ts: single-account sign-ups at concurrency C for S seconds (at
// most 20,000), each a new username; prints {created, refused, ms} as JSON.
// Usage: bun signup-storm.ts <base url> <public key> <seconds> <concurrency> <username prefix>

export {};

const [base, key, secondsRaw, concRaw, prefix] = process.argv.slice(2);
const until = performance.now() + Math.min(60, Number(secondsRaw)) * 1000;
const concurrency = Math.min(100, Number(concRaw));
const MAX = 20_000;
let next = 0;
let created = 0;
let refused = 0;
const started = performance.now();
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < MAX && performance.now() < until) {
      const i = next++;
      const r = await fetch(`${base}/user`, {
        method: "POST",
        headers: { accept: "application/vnd.service+json; version=0", "x-service-api-key": key!, "content-type": "application/json" },
        body: JSON.stringify({ username: `${prefix}${i}`, password: `signup-password-${i}` }),
      });
      await r.arrayBuffer();
      if (r.status === 201) created++;
      else refused++;
    }
  }),
);
process.stdout.write(JSON.stringify({ created, refused, ms: Math.round(performance.now() - started) }));
