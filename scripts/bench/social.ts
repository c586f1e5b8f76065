// Social sign-in benchmark against the built binary: the login round trip (Burrow -> provider fake on loopback ->
// a new session -> token response) for Social network 1 (facebookAccessToken: Graph /me with appsecret_proof)
// and OpenID Connect (oidcAccessToken: an RS256 ID token verified with cached JWKS), at concurrency 1 and 20;
// plus in-process micro-benchmarks: ID token verification, the aggregator's signature check, appsecret_proof.
// The provider fakes run in this process (they share the machine with the server and the load generator).
// Usage: bun run scripts/bench/social.ts [--seconds 5] [--build] [--binary path] [--write]

import { parseArgs } from "node:util";
import { startBenchServer } from "./server.ts";
import { ensureBinary, machine, table, writeSection } from "./env.ts";
import { defaultTool, runLoad, type LoadResult } from "./load.ts";
import { startGraphFake, startOidcIssuer } from "../../tests/helpers/social-fakes.ts";
import { OidcVerifier } from "../../src/social/oidc.ts";
import { aggregatorSignature, checkAggregatorSignature } from "../../src/social/aggregator-signature.ts";
import { appSecretProof } from "../../src/social/social1-graph.ts";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "5" },
    build: { type: "boolean", default: false },
    write: { type: "boolean", default: false },
    binary: { type: "string" },
  },
});
const seconds = Math.min(60, Math.max(1, Number(values.seconds)));
const APP_SECRET = "bench-app-secret";
const CLIENT_ID = "com.example.bench";

/** Mean microseconds of fn over n runs after a warm-up (bounded: n ≤ 100 000). */
async function micro(n: number, fn: () => unknown): Promise<number> {
  for (let i = 0; i < Math.min(200, n); i++) await fn();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await fn();
  return ((performance.now() - t0) / n) * 1000;
}

const graph = startGraphFake(APP_SECRET);
const issuer = await startOidcIssuer();
const exe = values.binary ?? ensureBinary(values.build!);
const server = await startBenchServer(exe);
try {
  await server.putSettings("development", {
    rateLimits: { ipPerMinute: 1_000_000 },
    social: {
      social1: { appId: "1", appSecret: APP_SECRET, baseUrl: graph.url },
      oidc: { bench: { issuer: issuer.issuer, clientIds: [CLIENT_ID] } },
    },
  });
  const formHeaders = { ...server.headers, "content-type": "application/x-www-form-urlencoded" };
  const fbToken = "bench-graph-token";
  graph.tokens.set(fbToken, { id: "900001", name: "Bench User" });
  const created = await fetch(`${server.url}/user/createUserWithFacebook`, {
    method: "POST",
    headers: server.headers,
    body: JSON.stringify({ fb_at: fbToken }),
  });
  if (created.status !== 201) throw new Error(`create: ${created.status} ${await created.text()}`);
  const idToken = await issuer.idToken({ sub: "bench-sub", aud: CLIENT_ID }, { expiresIn: "2h" });
  const first = await fetch(`${server.url}/user/oidcAccessToken`, {
    method: "POST",
    headers: server.headers,
    body: JSON.stringify({ provider: "bench", id_token: idToken }),
  });
  if (first.status !== 200) throw new Error(`oidc: ${first.status} ${await first.text()}`);

  const cases = [
    {
      name: "Social network 1 login (facebookAccessToken)",
      body: `fb_at=${fbToken}&token_type=mac`,
      path: "/user/facebookAccessToken",
      headers: formHeaders,
    },
    {
      name: "OpenID Connect login (oidcAccessToken)",
      body: JSON.stringify({ provider: "bench", id_token: idToken }),
      path: "/user/oidcAccessToken",
      headers: server.headers,
    },
    { name: "password login (accessToken), for scale", body: "", path: "/user/accessToken", headers: formHeaders },
  ];
  await fetch(`${server.url}/user`, {
    method: "POST",
    headers: server.headers,
    body: JSON.stringify({ username: "pw-user", password: "bench-password-1" }),
  });
  cases[2]!.body = "username=pw-user&password=bench-password-1&token_type=mac";

  const rows: (string | number)[][] = [];
  for (const c of cases)
    for (const connections of [1, 20]) {
      const calls0 = graph.calls + issuer.calls;
      const r: LoadResult = await runLoad({
        base: server.url,
        method: "POST",
        paths: [c.path],
        headers: c.headers,
        body: c.body,
        connections,
        seconds,
      });
      const providerCalls =
        c.path.includes("accessToken") && !c.path.includes("facebook") && !c.path.includes("oidc")
          ? "-"
          : ((graph.calls + issuer.calls - calls0) / r.requests).toFixed(2);
      console.error(`${c.name} c=${connections}: ${r.rps.toFixed(0)} req/s p50 ${r.p50} ms p99 ${r.p99} ms errors ${r.errors}`);
      rows.push([c.name, connections, Math.round(r.rps), r.p50, r.p99, r.errors, providerCalls]);
    }

  // In-process costs of one login's checks.
  const verifier = new OidcVerifier();
  const cfg = { issuer: issuer.issuer, clientIds: [CLIENT_ID] };
  const verifyUs = await micro(5000, async () => {
    const v = await verifier.verify("bench", cfg, idToken, undefined);
    if (!v.ok) throw new Error(v.reason);
  });
  const secret = Buffer.from("bench aggregator secret").toString("base64");
  const ts = String(Math.floor(Date.now() / 1000));
  const sig = aggregatorSignature(secret, ts, "uid-1");
  const aggUs = await micro(50_000, () =>
    checkAggregatorSignature({ uid: "uid-1", timestamp: ts, signature: sig, secretBase64: secret, nowMs: Date.now() }),
  );
  const proofUs = await micro(50_000, () => appSecretProof(APP_SECRET, fbToken));

  const md = [
    `### Social sign-in (scripts/bench/social.ts)`,
    ``,
    `${machine()}; ${defaultTool()}, ${seconds} s per run, built binary, loopback; the provider fakes (tests/helpers/social-fakes.ts) run in the benchmark's own process. Every login verifies the credential with the provider (or the issuer's cached keys) and writes a new session.`,
    ``,
    table(["login", "connections", "req/s", "p50 ms", "p99 ms", "errors", "provider calls per login"], rows),
    ``,
    table(
      ["check (in process, per login)", "µs"],
      [
        ["OpenID ID token verification (RS256, JWKS cached; jose jwtVerify + our claim checks)", verifyUs.toFixed(1)],
        ["aggregator signature check (HMAC-SHA1, constant-time compare)", aggUs.toFixed(2)],
        ["Graph appsecret_proof (HMAC-SHA256)", proofUs.toFixed(2)],
      ],
    ),
  ].join("\n");
  console.log(md);
  if (values.write) writeSection("social", md);
} finally {
  await server.stop();
  graph.stop();
  issuer.stop();
}
