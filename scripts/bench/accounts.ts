// Accounts benchmark against the built binary (loopback, bounded): GET by key unsigned, MAC-signed and with a bearer
// token in the same run (interleaved rounds of requests prepared in advance and sent once each by wrk, so no MAC
// nonce repeats), and the login rate of each grant: password (MAC and bearer tokens), a mailed email code, a
// password then a TOTP code (grant_type=mfa), and a passkey (loginOptions, then grant_type=passkey with an
// assertion by the tests' software authenticator).
// Usage: bun run scripts/bench/accounts.ts [--seconds 3] [--rounds 5] [--logins 200] [--build] [--write]

import { parseArgs } from "node:util";
import { macSignature, normalizedString } from "../../src/auth/mac.ts";
import { ensureBinary, machine, table, writeSection } from "./env.ts";
import { type LoadResult, runPreparedGets } from "./load.ts";
import { startBenchServer } from "./server.ts";
import { Secret, TOTP } from "otpauth";
import { SoftAuthenticator } from "../../tests/helpers/soft-authenticator.ts";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "3" },
    rounds: { type: "string", default: "5" },
    logins: { type: "string", default: "200" },
    build: { type: "boolean", default: false },
    write: { type: "boolean", default: false },
    binary: { type: "string" },
  },
});
const SECONDS = Math.min(30, Math.max(1, Number(values.seconds)));
const ROUNDS = Math.min(15, Math.max(1, Number(values.rounds)));
const LOGINS = Math.min(2000, Math.max(10, Number(values.logins)));
if (!Bun.which("wrk")) throw new Error("this benchmark needs wrk (apt-get install wrk): signed requests are replayed from a prepared file");
const server = await startBenchServer(values.binary ?? ensureBinary(values.build!));
const url = new URL(server.url);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const form = { ...server.headers, "content-type": "application/x-www-form-urlencoded" };

async function token(username: string, kind: "mac" | "bearer"): Promise<{ access_token: string; mac_key?: string }> {
  const r = await fetch(`${server.url}/user/accessToken`, {
    method: "POST",
    headers: form,
    body: `username=${username}&password=bench-password-1&token_type=${kind}`,
  });
  if (!r.ok) throw new Error(`login ${username}: ${r.status} ${await r.text()}`);
  return (await r.json()) as { access_token: string; mac_key?: string };
}

/** Sign up `n` users `<prefix><i>` (20 passwords a request: the most one request may carry). */
async function seedUsers(prefix: string, n: number, extra: (i: number) => Record<string, unknown> = () => ({})): Promise<void> {
  for (let i = 0; i < n; i += 20) {
    const batch = Array.from({ length: Math.min(20, n - i) }, (_, j) => ({
      username: `${prefix}${i + j}`,
      password: "bench-password-1",
      ...extra(i + j),
    }));
    const r = (await (
      await fetch(`${server.url}/user`, {
        method: "POST",
        headers: { ...server.headers, "content-type": "application/json" },
        body: JSON.stringify(batch),
      })
    ).json()) as { failed: string[] };
    if (r.failed.length) throw new Error(`sign-ups failed: ${r.failed.join(", ")}`);
  }
}

/** `n` calls of `one` at concurrency `c`: calls a second and failures. */
async function rate(n: number, c: number, one: (i: number) => Promise<boolean>): Promise<{ perSecond: number; failed: number }> {
  let next = 0;
  let failed = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: c }, async () => {
      while (next < n) if (!(await one(next++))) failed++;
    }),
  );
  return { perSecond: (n * 1000) / (performance.now() - started), failed };
}

try {
  await server.putSchema("bench", { fields: { title: { type: "string" }, n: { type: "integer" } } });
  const ids = await server.seed("bench", 10_000, (i) => ({ title: `object ${i}`, n: i }));
  // All load comes from one address: the per-IP limits would stop it at once.
  await server.putSettings("development", {
    rateLimits: { ipPerMinute: 1_000_000, failedLoginsPerAccount: 1_000_000, signupsPerIpPerHour: 1_000_000 },
  });
  await seedUsers("u", LOGINS + 10, (i) => ({ email: `u${i}@example.com` }));

  // 1. GET by key: unsigned, MAC-signed, bearer; c=50, paired rounds in rotating order.
  const mac = await token("u0", "mac");
  const bearer = await token("u1", "bearer");
  const base = { accept: server.headers.accept!, "x-service-api-key": server.headers["x-service-api-key"]! };
  const path = (i: number) => `/bench/${ids[i % ids.length]}`;
  const prepared = 250_000;
  const requests = (kind: "unsigned" | "mac" | "bearer", round: number) => {
    const ts = String(Math.floor(Date.now() / 1000));
    return Array.from({ length: prepared }, (_, i) => {
      if (kind === "unsigned") return { path: path(i), headers: base };
      if (kind === "bearer") return { path: path(i), headers: { ...base, authorization: `Bearer ${bearer.access_token}` } };
      const nonce = `r${round}n${i}`;
      const sig = macSignature(
        mac.mac_key!,
        normalizedString({ ts, nonce, method: "GET", uri: path(i), host: url.hostname, port: Number(url.port) }),
      );
      return {
        path: path(i),
        headers: { ...base, authorization: `MAC id="${mac.access_token}",ts="${ts}",nonce="${nonce}",mac="${sig}"` },
      };
    });
  };
  const kinds = ["unsigned", "mac", "bearer"] as const;
  for (const k of kinds) await runPreparedGets({ base: server.url, connections: 50, seconds: 1, requests: requests(k, -1) });
  const runs: Record<(typeof kinds)[number], LoadResult[]> = { unsigned: [], mac: [], bearer: [] };
  const macRatios: number[] = [];
  const bearerRatios: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const got: Partial<Record<(typeof kinds)[number], LoadResult>> = {};
    for (let j = 0; j < kinds.length; j++) {
      const k = kinds[(round + j) % kinds.length]!;
      got[k] = await runPreparedGets({ base: server.url, connections: 50, seconds: SECONDS, requests: requests(k, round) });
      runs[k].push(got[k]!);
    }
    macRatios.push(got.mac!.rps / got.unsigned!.rps);
    bearerRatios.push(got.bearer!.rps / got.unsigned!.rps);
    console.error(
      `round ${round + 1}: unsigned ${Math.round(got.unsigned!.rps)}/s, MAC ${Math.round(got.mac!.rps)}/s, bearer ${Math.round(got.bearer!.rps)}/s`,
    );
  }

  // 2. Logins per second by grant (c=10, each user once).
  const password = (kind: "mac" | "bearer", offset: number) =>
    rate(LOGINS / 2, 10, async (i) => {
      const r = await fetch(`${server.url}/user/accessToken`, {
        method: "POST",
        headers: form,
        body: `username=u${offset + i}&password=bench-password-1&token_type=${kind}`,
      });
      await r.text();
      return r.ok;
    });
  const pwMac = await password("mac", 0);
  const pwBearer = await password("bearer", LOGINS / 2);
  // Email codes: every user asks for one; the codes are read from the outbox; then the grant is timed.
  const asked = await rate(LOGINS, 10, async (i) => {
    const r = await fetch(`${server.url}/user/requestCode`, {
      method: "POST",
      headers: { ...server.headers, "content-type": "application/json" },
      body: JSON.stringify({ username: `u${i}` }),
    });
    await r.text();
    return r.ok;
  });
  const codes = new Map<string, string>();
  for (let i = 0; i < 100 && codes.size < LOGINS; i++) {
    const box = (await server.admin("GET", "/outbox?limit=500")) as { to: string; text: string }[];
    for (const m of box) codes.set(m.to.split("@")[0]!, /\b(\d{6})\b/.exec(m.text)![1]!);
    if (codes.size < LOGINS) await Bun.sleep(100);
  }
  const byCode = await rate(Math.min(LOGINS, codes.size), 10, async (i) => {
    const r = await fetch(`${server.url}/user/accessToken`, {
      method: "POST",
      headers: form,
      body: `grant_type=email_code&username=u${i}&code=${codes.get(`u${i}`)}&token_type=bearer`,
    });
    await r.text();
    return r.ok;
  });

  // A password, then a TOTP code: users with TOTP on (their confirm used this step, so the login uses the next one).
  const MFA_USERS = Math.min(100, LOGINS);
  await seedUsers("m", MFA_USERS * 2);
  const bearerOf = async (u: string) => {
    const r = await fetch(`${server.url}/user/accessToken`, {
      method: "POST",
      headers: form,
      body: `username=${u}&password=bench-password-1&token_type=bearer`,
    });
    return ((await r.json()) as { access_token: string }).access_token;
  };
  const signedJson = (tok: string) => ({ ...server.headers, "content-type": "application/json", authorization: `Bearer ${tok}` });
  const secrets: string[] = [];
  for (let i = 0; i < MFA_USERS; i++) {
    const tok = await bearerOf(`m${i}`);
    const e = (await (await fetch(`${server.url}/user/mfa/totp`, { method: "POST", headers: signedJson(tok) })).json()) as {
      secret: string;
    };
    const code = TOTP.generate({ secret: Secret.fromBase32(e.secret) });
    const c = await fetch(`${server.url}/user/mfa/totp/confirm`, {
      method: "POST",
      headers: signedJson(tok),
      body: JSON.stringify({ code }),
    });
    if (!c.ok) throw new Error(`confirm m${i}: ${await c.text()}`);
    secrets.push(e.secret);
  }
  const byMfa = await rate(MFA_USERS, 10, async (i) => {
    const first = await fetch(`${server.url}/user/accessToken`, {
      method: "POST",
      headers: form,
      body: `username=m${i}&password=bench-password-1`,
    });
    const { mfa_token } = (await first.json()) as { mfa_token?: string };
    if (!mfa_token) return false;
    const code = TOTP.generate({ secret: Secret.fromBase32(secrets[i]!), timestamp: Date.now() + 30_000 });
    const r = await fetch(`${server.url}/user/accessToken`, {
      method: "POST",
      headers: form,
      body: `grant_type=mfa&mfa_token=${mfa_token}&code=${code}`,
    });
    await r.text();
    return r.ok;
  });

  // Passkeys: each user registers one; a login is loginOptions then the grant with the software authenticator's assertion.
  const origin = `http://localhost:${url.port}`;
  await server.putSettings("development", { auth: { passkeys: { rpId: "localhost", origins: [origin] } } });
  const authenticators: SoftAuthenticator[] = [];
  for (let i = 0; i < MFA_USERS; i++) {
    const tok = await bearerOf(`m${MFA_USERS + i}`);
    const options = await (await fetch(`${server.url}/user/passkeys/registerOptions`, { method: "POST", headers: signedJson(tok) })).json();
    const a = new SoftAuthenticator();
    const reg = await fetch(`${server.url}/user/passkeys/register`, {
      method: "POST",
      headers: signedJson(tok),
      body: JSON.stringify(await a.create(options as never, origin)),
    });
    if (!reg.ok) throw new Error(`register m${MFA_USERS + i}: ${await reg.text()}`);
    authenticators.push(a);
  }
  const byPasskey = await rate(MFA_USERS, 10, async (i) => {
    const o = (await (
      await fetch(`${server.url}/user/passkeys/loginOptions`, {
        method: "POST",
        headers: { ...server.headers, "content-type": "application/json" },
        body: JSON.stringify({ username: `m${MFA_USERS + i}` }),
      })
    ).json()) as { challenge: string; challenge_id: string };
    const assertion = await authenticators[i]!.get(o as never, origin);
    const r = await fetch(`${server.url}/user/accessToken`, {
      method: "POST",
      headers: form,
      body: new URLSearchParams({ grant_type: "passkey", assertion: JSON.stringify(assertion), challenge_id: o.challenge_id }).toString(),
    });
    await r.text();
    return r.ok;
  });

  const med = (k: (typeof kinds)[number]) => median(runs[k].map((r) => r.rps));
  const p99 = (k: (typeof kinds)[number]) => median(runs[k].map((r) => r.p99));
  const md = [
    "## Accounts: bearer tokens and the login grants (scripts/bench/accounts.ts)",
    "",
    `${machine()}; built binary, loopback; wrk c=50 replaying requests prepared in advance (each sent once), ${SECONDS} s per run, ${ROUNDS} rounds in rotating order; logins at c=10.`,
    "",
    table(
      ["GET by key", "req/s (median)", "p99 ms (median)", "vs unsigned (median of rounds)", "rounds"],
      [
        ["unsigned", Math.round(med("unsigned")), p99("unsigned"), "-", runs.unsigned.map((r) => Math.round(r.rps)).join(" / ")],
        [
          "MAC-signed",
          Math.round(med("mac")),
          p99("mac"),
          `${(median(macRatios) * 100).toFixed(1)}%`,
          runs.mac.map((r) => Math.round(r.rps)).join(" / "),
        ],
        [
          "bearer",
          Math.round(med("bearer")),
          p99("bearer"),
          `${(median(bearerRatios) * 100).toFixed(1)}%`,
          runs.bearer.map((r) => Math.round(r.rps)).join(" / "),
        ],
      ],
    ),
    "",
    table(
      ["login (accessToken grant)", "logins/s", "failed"],
      [
        ["password, MAC token (argon2id check)", pwMac.perSecond.toFixed(1), pwMac.failed],
        ["password, bearer token", pwBearer.perSecond.toFixed(1), pwBearer.failed],
        ["requestCode (answers before the mail is prepared)", asked.perSecond.toFixed(1), asked.failed],
        ["email_code (a mailed 6-digit code)", byCode.perSecond.toFixed(1), byCode.failed],
        ["password then mfa (two calls: mfa_required, then grant_type=mfa with a TOTP code)", byMfa.perSecond.toFixed(1), byMfa.failed],
        [
          "passkey (two calls: loginOptions, then grant_type=passkey with an ES256 assertion)",
          byPasskey.perSecond.toFixed(1),
          byPasskey.failed,
        ],
      ],
    ),
  ].join("\n");
  console.log(md);
  if (values.write) writeSection("accounts", md);
} finally {
  await server.stop();
}
