// Experiment: do distinct SQL texts keep appearing under a steady mix? (prepared-statement caches fill up to 1000 per connection)
import { Database } from "bun:sqlite";
const seen = new Map<Database, Set<string>>();
const orig = Database.prototype.prepare;
(Database.prototype as any).prepare = function (this: Database, sql: string, ...rest: unknown[]) {
  let s = seen.get(this);
  if (!s) seen.set(this, (s = new Set()));
  s.add(sql);
  return (orig as any).call(this, sql, ...rest);
};
const { makeTestApp } = await import("../tests/helpers/app.ts");
const t = await makeTestApp({ flags: {}, logLevel: "error" });
await t.admin("PUT", "/schemas/soak_item", { fields: { title: { type: "string" }, n: { type: "integer" }, tag: { type: "string" }, hits: { type: "integer" } } });
await t.admin("PUT", "/settings/development", { rateLimits: { ipPerMinute: 1_000_000, failedLoginsPerAccount: 1_000_000, signupsPerIpPerHour: 1_000_000 } });
const keys: string[] = [];
for (let i = 0; i < 2000; i += 500) {
  const r = await t.request("POST", "/soak_item", { body: Array.from({ length: 500 }, (_, j) => ({ title: `o${i + j}`, n: i + j, tag: `t${(i + j) % 20}`, hits: 0 })) });
  keys.push(...r.body.succeeded);
}
await t.request("POST", "/user", { body: { username: "u0", password: "bench-password-1" } });
const created: string[] = [];
const pick = () => keys[Math.floor(Math.random() * keys.length)]!;
const report = (i: number) => {
  const sizes = [...seen.values()].map((s) => s.size).sort((a, b) => b - a);
  console.log(i, "distinct SQL per connection:", sizes.slice(0, 8).join(" "));
};
for (let i = 0; i <= 6000; i++) {
  const x = i % 10;
  if (x < 3) await t.request("GET", `/soak_item/${pick()}`);
  else if (x < 5) await t.request("GET", `/soak_item?tag=t${i % 20}&n[gt]=${Math.floor(Math.random() * 2000)}`, { headers: { range: "objects=0-19" } });
  else if (x < 7) {
    const r = await t.request("POST", "/soak_item", { body: { title: `new ${i}`, n: 5000 + i, tag: "new", hits: 0 } });
    created.push(r.body.soak_item_id);
    if (created.length > 100) await t.request("DELETE", `/soak_item/${created.shift()}`);
  } else if (x < 9) await t.request("PUT", `/soak_item/${pick()}`, { body: { "hits[inc]": 1 } });
  else if (i % 50 === 9) {
    const r = await t.request("POST", "/user/accessToken", { raw: "grant_type=password&username=u0&password=bench-password-1&token_type=bearer", headers: { "content-type": "application/x-www-form-urlencoded" } });
    await t.request("GET", "/user/logout", { headers: { authorization: `Bearer ${r.body.access_token}` } });
  }
  if (i % 1000 === 0) report(i);
}
for (const [db, s] of seen) if (s.size > 30) { console.log("--- a connection with", s.size); for (const q of [...s].slice(-8)) console.log("  ", q.slice(0, 200)); }
await t.close();
process.exit(0);
