// A login storm for scripts/bench/auth.ts: N password logins at concurrency C; prints {ok, failed, ms} as JSON.
// Usage: bun login-storm.ts <base url> <public key> <count> <concurrency>

export {};

const [base, key, countRaw, concRaw] = process.argv.slice(2);
const count = Math.min(10_000, Number(countRaw));
const concurrency = Math.min(100, Number(concRaw));
let next = 0;
let ok = 0;
let failed = 0;
const started = performance.now();
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < count) {
      const i = next++;
      const r = await fetch(`${base}/user/accessToken`, {
        method: "POST",
        headers: {
          accept: "application/vnd.service+json; version=0",
          "x-service-api-key": key!,
          "content-type": "application/x-www-form-urlencoded",
        },
        body: `username=u${i % 50}&password=bench-password-1&token_type=mac`,
      });
      await r.arrayBuffer();
      if (r.ok) ok++;
      else failed++;
    }
  }),
);
process.stdout.write(JSON.stringify({ ok, failed, ms: Math.round(performance.now() - started) }));
