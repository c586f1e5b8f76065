// Property test of the live filter and rendering (src/live/match.ts, render.ts) against the real SQL: seeded-random
// objects of a schema with every field type, then thousands of seeded-random condition sets, each compiled by
// compile.ts and run over the table, must select exactly the keys compileMatch accepts (or both refuse with the
// same 400); and every object rendered by renderFor must be the text SQLite renders for the same viewer and select,
// also for a second version of the schema without some fields.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { compileConditions } from "../../src/datastore/query/compile.ts";
import { parseConditions } from "../../src/datastore/query/parse.ts";
import { ApiError } from "../../src/errors.ts";
import { compileMatch } from "../../src/live/match.ts";
import { type LiveView, parseFull, renderFor } from "../../src/live/render.ts";
import { type CompiledSchema, compileSchema } from "../../src/schema/compiled.ts";
import { bindViewer, objectJsonSql, type Viewer } from "../../src/schema/json-sql.ts";
import { KEYS, makeTestApp, type TestApp } from "../helpers/app.ts";
import { oauthAuth } from "../helpers/sign.ts";

const SEED = 20240611;
let seed = SEED;
/** Park-Miller: a fixed sequence for a fixed SEED. */
const rnd = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
const int = (n: number) => Math.floor(rnd() * n);
const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
const maybe = <T>(p: number, f: () => T): T | undefined => (rnd() < p ? f() : undefined);

const STRINGS = [
  "",
  "a",
  "A",
  "b",
  "ab",
  "a b",
  "Z",
  "é",
  "\uffff",
  "😀",
  "\ue000",
  'x"y\\',
  "10",
  "9",
  "-1",
  "tab\there",
  "nul\u0000x",
  "\n",
];
const INTS = [0, 1, -1, 2, 3, -3, 42, 9007199254740991, -9007199254740991];
const FLOATS = [0, 1, -1, 0.5, 1.5, 1 / 3, 0.1 + 0.2, 1e-7, 1e20, 1.2345678901234568e21, -2.5e-10, 59.9, 10.75, 2 ** 53 + 2, 5e-324];
const LATS = [0, 89.9, -89.9, 90, -90, 59.9, -33.5, 45];
const LONS = [0, 179.99, -180, -179.99, 10.7, 151.2, -0.5];
const KEYS_POOL = Array.from({ length: 12 }, (_, i) => `k${i}`);
const OWNERS = ["user/u1", "user/u2", "user/u3"];

const DEF = {
  fields: {
    s: { type: "string" },
    s2: { type: "string" },
    n: { type: "integer" },
    f: { type: "float" },
    b: { type: "boolean" },
    tags: { type: "array", items: "string" },
    nums: { type: "array", items: "integer" },
    fls: { type: "array", items: "float" },
    flags: { type: "array", items: "boolean" },
    at: { type: "geopoint" },
    one: { type: "relationship", schema: "live" },
    many: { type: "relationship", schema: "live", many: true },
    pic: { type: "binary" },
    secret: { type: "string", visibility: "owner" },
    hn: { type: "integer", visibility: "owner" },
  },
} as const;
type FieldName = keyof typeof DEF.fields;

const randomFloat = () => (rnd() < 0.7 ? pick(FLOATS) : (rnd() - 0.5) * 10 ** (int(30) - 15));

/** A random object: every field present with probability 3/4, values from pools with edge cases. */
function randomObject(i: number): Record<string, unknown> {
  const o: Record<string, unknown> = { live_id: i < KEYS_POOL.length ? KEYS_POOL[i] : `o${i}` };
  const set = (k: FieldName, f: () => unknown) => {
    const v = maybe(0.75, f);
    if (v !== undefined) o[k] = v;
  };
  set("s", () => pick(STRINGS));
  set("s2", () => pick(STRINGS));
  set("n", () => pick(INTS));
  set("f", randomFloat);
  set("b", () => rnd() < 0.5);
  set("tags", () => Array.from({ length: int(4) }, () => pick(STRINGS.slice(0, 8))));
  set("nums", () => Array.from({ length: int(4) }, () => pick(INTS)));
  set("fls", () => Array.from({ length: int(4) }, () => pick(FLOATS)));
  set("flags", () => Array.from({ length: int(3) }, () => rnd() < 0.5));
  set("at", () => (rnd() < 0.6 ? { lat: pick(LATS), lon: pick(LONS) } : { lat: rnd() * 180 - 90, lon: rnd() * 360 - 180 }));
  set("one", () => pick(KEYS_POOL));
  set("many", () => Array.from({ length: int(4) }, () => pick(KEYS_POOL)));
  set("secret", () => pick(STRINGS));
  set("hn", () => pick(INTS));
  const owner = maybe(0.8, () => pick(OWNERS));
  if (owner) o.sm_owner = owner;
  // The object a viewer below reads as its own (`self`) without owning it.
  if (o.live_id === "k3") Object.assign(o, { secret: "mine", hn: 7, sm_owner: "user/u3" });
  return o;
}

let t: TestApp;
let s: CompiledSchema;
let rows: Row[] = [];
let members: CompiledSchema;
let memberRows: Row[] = [];
type Row = { key: string; json: string };
/** A request signed with the private key: the app, which may set sm_owner. */
const asApp = (method: string, path: string, body: unknown) =>
  t.request(method, path, {
    body,
    key: null,
    headers: { authorization: oauthAuth(KEYS.devPublic, KEYS.devPrivate, method, `http://localhost${path}`) },
  });
const sql = (q: string, args: any[] = []) => t.burrow.envDbs.development.execute({ sql: q, args });

/** Every object of a schema as its full JSON (what the change log records), in creation order. */
async function fullRows(c: CompiledSchema): Promise<Row[]> {
  const rs = await sql(`SELECT t.${c.pk} AS k, ${c.json} AS j FROM ${c.table} AS t ORDER BY t.rowid`);
  return rs.rows.map((row) => ({ key: row.k as string, json: row.j as string }));
}

beforeAll(async () => {
  t = await makeTestApp();
  expect((await t.admin("PUT", "/schemas/live", DEF)).status).toBeLessThan(300);
  const body = Array.from({ length: 300 }, (_, i) => randomObject(i));
  const r = await asApp("POST", "/live", body);
  expect(r.body.failed).toEqual([]);
  // Binary values: a real upload, stored paths and imported URLs (written directly, as an import stores them).
  const upload = "Content-Type: image/png\nContent-Disposition: attachment; filename=a.png\nContent-Transfer-Encoding: base64\n\naGk=";
  expect((await asApp("PUT", "/live/k0", { pic: upload })).status).toBe(200);
  for (let i = 1; i < 300; i += 3) {
    const v = pick(["/_files/development/0123456789abcdef0123456789abcdef/x y.png", "https://cdn.example/p.png", "/_filesx", "/_files/"]);
    await sql(`UPDATE o_live SET pic = ? WHERE live_id = ?`, [v, body[i]!.live_id as string]);
  }
  // A user schema: a password (never rendered) and an owner-only email its user reads on its own object.
  const memberDef = {
    user: { key: "username", password: "password" },
    fields: {
      password: { type: "password" },
      email: { type: "string", visibility: "owner" },
      nick: { type: "string" },
      score: { type: "float" },
    },
  };
  expect((await t.admin("PUT", "/schemas/member", memberDef)).status).toBeLessThan(300);
  const people = ["ann", "bob", "cy", "dee"].map((u, i) => ({
    username: u,
    password: `${u}-secret-pw`,
    email: `${u}@example.com`,
    ...(i % 2 ? { nick: u.toUpperCase(), score: i / 7 } : { sm_owner: `member/${u}` }),
  }));
  expect((await asApp("POST", "/member", people)).body.failed).toEqual([]);
  const schemas = t.burrow.catalog.development().schemas;
  s = schemas.get("live")!;
  members = schemas.get("member")!;
  rows = await fullRows(s);
  memberRows = await fullRows(members);
  expect([rows.length, memberRows.length]).toEqual([300, 4]);
});
afterAll(() => t.close());

const OPS = ["", "[ne]", "[lt]", "[lte]", "[gt]", "[gte]", "[null]", "[empty]", "[in]", "[nin]", "[near]", "[within]"];
const QUERY_FIELDS = [...Object.keys(DEF.fields), "live_id", "sm_owner", "createddate", "lastmoddate"];

/** A value for `field op`, mostly one the objects hold (so comparisons hit), sometimes one that does not convert. */
function randomValue(field: string, op: string, created: number[]): string {
  if (op === "[null]" || op === "[empty]") return rnd() < 0.02 ? "maybe" : pick(["true", "false", "TRUE", "False"]);
  if (op === "[near]" || op === "[within]") {
    const lat = () => String(rnd() < 0.5 ? pick(LATS) : Math.round((rnd() * 180 - 90) * 1000) / 1000);
    const lon = () => String(rnd() < 0.5 ? pick(LONS) : Math.round((rnd() * 360 - 180) * 1000) / 1000);
    const radius = () => String(pick([0, 0.001, 0.01, 0.05, 0.2, 0.5, 1, 1.6, 3, 3.2, 4]));
    if (op === "[near]" && rnd() < 0.3) return `${lat()},${lon()}`;
    if (op === "[within]" && rnd() < 0.5) {
      const [a, b] = [Number(lat()), Number(lat())].sort((x, y) => x - y);
      return `${a},${lon()},${b},${lon()}`;
    }
    return rnd() < 0.02 ? `${lat()},${lon()},-1` : `${lat()},${lon()},${radius()}`;
  }
  const one = (): string => {
    if (rnd() < 0.01) return pick(["1.5", "abc", "yes", "1e3", " 2 ", "+0001"]);
    switch (field) {
      case "n":
      case "hn":
      case "nums":
        return String(pick(INTS));
      case "f":
      case "fls":
        return String(rnd() < 0.8 ? pick(FLOATS) : randomFloat());
      case "b":
      case "flags":
        return pick(["true", "false", "1", "0"]);
      case "one":
      case "many":
      case "live_id":
        return pick(KEYS_POOL);
      case "sm_owner":
        return pick(OWNERS);
      case "createddate":
      case "lastmoddate":
        return String(pick(created));
      case "pic":
        return pick(["https://cdn.example/p.png", "/_files/", "/_filesx"]);
      default:
        return pick(STRINGS);
    }
  };
  const v = op === "[in]" || op === "[nin]" ? Array.from({ length: 1 + int(4) }, one).join(",") : one();
  return v === "" ? "a" : v;
}

/** Operators that apply to a field (compile.ts refuses the others), by the field's kind. */
function validOps(field: string): string[] {
  if (field === "at") return ["[near]", "[within]", "[null]"];
  const def = (DEF.fields as Record<string, { type: string; many?: boolean }>)[field];
  const multi = def?.type === "array" || (def?.type === "relationship" && def.many === true);
  if (multi) return ["", "[ne]", "[null]", "[in]", "[nin]"];
  const text = def === undefined ? field === "live_id" || field === "sm_owner" : def.type === "string";
  return ["", "[ne]", "[lt]", "[lte]", "[gt]", "[gte]", "[null]", "[in]", "[nin]", ...(text ? ["[empty]"] : [])];
}

/** A clause, valid nine times in ten (an unknown field, an operator the field refuses, a value that does not convert). */
function randomClause(created: number[]): string {
  const field = rnd() < 0.01 ? "nope" : pick(QUERY_FIELDS);
  const op = rnd() < 0.97 ? pick(validOps(field)) : pick(OPS);
  return `${field}${op}=${encodeURIComponent(randomValue(field, op, created))}`;
}

function randomQuery(created: number[]): string {
  const parts = Array.from({ length: int(3) + (rnd() < 0.5 ? 1 : 0) }, () => randomClause(created));
  if (rnd() < 0.4) {
    const alternatives = 1 + int(3);
    for (let a = 1; a <= alternatives; a++) {
      if (rnd() < 0.5) parts.push(`[or1].${randomClause(created)}`);
      else for (let k = 0; k < 2; k++) parts.push(`[or1].[and${a}].${randomClause(created)}`);
    }
  }
  return parts.join("&");
}

const errorOf = (f: () => unknown): string | null => {
  try {
    f();
    return null;
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    return `${e.status} ${e.message}`;
  }
};

describe("compileMatch agrees with the SQL WHERE", () => {
  test("on thousands of random condition sets over every field type", async () => {
    seed = SEED;
    const objects = rows.map((r) => ({ key: r.key, obj: parseFull(r.json), plain: JSON.parse(r.json) as Record<string, unknown> }));
    const created = objects.map((o) => o.obj.createddate as number);
    const failures: string[] = [];
    let compared = 0;
    let refused = 0;
    let selected = 0;
    for (let i = 0; i < 4000 && failures.length < 5; i++) {
      const query = randomQuery(created);
      const conditions = parseConditions(new URLSearchParams(query));
      let where: ReturnType<typeof compileConditions> | null = null;
      const sqlError = errorOf(() => (where = compileConditions(s, conditions, null)));
      let match: ((o: Record<string, unknown>) => boolean) | null = null;
      const jsError = errorOf(() => (match = compileMatch(s, conditions)));
      if (sqlError !== jsError) {
        failures.push(`seed ${SEED}, query ${i} ${JSON.stringify(query)}: SQL ${sqlError}, compileMatch ${jsError}`);
        continue;
      }
      if (sqlError !== null) {
        refused++;
        continue;
      }
      const w = where! as { sql: string; args: any[] };
      const rs = await sql(`SELECT t.live_id AS k FROM ${s.table} AS t WHERE ${w.sql}`, w.args);
      const bySql = new Set(rs.rows.map((r) => r.k as string));
      const m = match! as (o: Record<string, unknown>) => boolean;
      const diff = objects.filter((o) => m(o.obj) !== bySql.has(o.key) || m(o.plain) !== bySql.has(o.key));
      if (diff.length)
        failures.push(
          `seed ${SEED}, query ${i} ${JSON.stringify(query)}: ${diff
            .slice(0, 3)
            .map((o) => `${bySql.has(o.key) ? "SQL only" : "JS only"}: ${JSON.stringify(o.obj)}`)
            .join("; ")}`,
        );
      compared++;
      selected += bySql.size;
    }
    expect(failures).toEqual([]);
    // The random queries exercised both outcomes: many compared, some refused, and matches were found.
    console.log(
      `seed ${SEED}, floats ${s.floats}: ${compared} condition sets compared, ${refused} refused alike, ${selected} objects selected`,
    );
    expect(compared).toBeGreaterThan(2500);
    expect(refused).toBeGreaterThan(100);
    expect(selected).toBeGreaterThan(compared * 10);
  });
});

const VIEWERS: Viewer[] = [
  { fileBase: null, owner: "all" },
  { fileBase: "https://files.example", owner: "all" },
  { fileBase: "http://h:1", owner: "none" },
  { fileBase: null, owner: { owner: "user/u1", self: null } },
  { fileBase: "https://f", owner: { owner: "user/u2", self: "k3" } },
];
const SELECTS: (string[] | null)[] = [null, ["s", "pic", "secret"], ["createddate"], ["n", "f", "at", "sm_owner", "hn"], ["live_id"], []];

/** The SQL rendering of every row for a viewer and select, by key. */
async function sqlRendering(c: CompiledSchema, viewer: Viewer, only: ReadonlySet<string> | null): Promise<Map<string, string>> {
  const r =
    only === null
      ? c.renderFor(viewer, "t")
      : ((o) => ({ sql: o.sql, args: bindViewer(o.slots, viewer) }))(
          objectJsonSql(c.pk, c.fields, "t", { floats: c.floats, only, viewer }),
        );
  const rs = await sql(`SELECT t.${c.pk} AS k, ${r.sql} AS j FROM ${c.table} AS t`, r.args);
  return new Map(rs.rows.map((row) => [row.k as string, row.j as string]));
}

async function compareRenderings(
  c: CompiledSchema,
  objects: Row[],
  viewers: Viewer[],
  selects: (string[] | null)[],
): Promise<{ failures: string[]; compared: number }> {
  const failures: string[] = [];
  let compared = 0;
  for (const viewer of viewers)
    for (const select of selects) {
      const only = select === null ? null : new Set(select);
      const view: LiveView = { ...viewer, only };
      const bySql = await sqlRendering(c, viewer, only);
      for (const row of objects) {
        const mine = renderFor(c, parseFull(row.json), view);
        compared++;
        if (mine !== bySql.get(row.key) && failures.length < 5)
          failures.push(
            `seed ${SEED}, ${c.name} ${JSON.stringify(view, (_, v) => (v instanceof Set ? [...v] : v))}:\n  SQL ${bySql.get(row.key)}\n  JS  ${mine}`,
          );
      }
    }
  return { failures, compared };
}

describe("renderFor agrees with the SQL rendering", () => {
  test("for every kind of viewer, with and without a select", async () => {
    const { failures, compared } = await compareRenderings(s, rows, VIEWERS, SELECTS);
    expect(failures).toEqual([]);
    expect(compared).toBe(VIEWERS.length * SELECTS.length * rows.length);
  });

  test("for a user schema: never the password, the owner-only email to its user on its own object", async () => {
    const viewers: Viewer[] = [
      ...VIEWERS.slice(0, 3),
      { fileBase: null, owner: { owner: "member/ann", self: "ann" } },
      { fileBase: null, owner: { owner: "member/bob", self: "bob" } },
      { fileBase: null, owner: { owner: "member/cy", self: null } },
    ];
    const { failures, compared } = await compareRenderings(members, memberRows, viewers, [null, ["email", "password", "nick"], ["score"]]);
    expect(failures).toEqual([]);
    expect(compared).toBe(viewers.length * 3 * memberRows.length);
    const bob = parseFull(memberRows.find((r) => r.key === "bob")!.json);
    expect(renderFor(members, bob, { fileBase: null, owner: { owner: "member/bob", self: "bob" }, only: null })).toContain('"email":"bob@');
    expect(renderFor(members, bob, { fileBase: null, owner: { owner: "member/ann", self: "ann" }, only: null })).not.toContain("email");
  });

  test("for another version of the schema, without some fields, reading the same full JSON", async () => {
    const fields = { ...s.def.fields };
    delete fields.s2;
    delete fields.secret;
    delete fields.fls;
    const older = compileSchema({ ...s.def, fields }, s.floats);
    const { failures } = await compareRenderings(older, rows, VIEWERS, SELECTS);
    expect(failures).toEqual([]);
    expect(renderFor(older, parseFull(rows[0]!.json), { fileBase: null, owner: "all", only: null })).not.toContain('"s2":');
  });

  test("without parseFull's float texts, objects whose floats have few digits still render alike", async () => {
    const bySql = await sqlRendering(s, VIEWERS[0]!, null);
    const few = (v: unknown) => typeof v !== "number" || Number.isInteger(v) || Number(v.toPrecision(13)) === v;
    let compared = 0;
    for (const row of rows) {
      const o = JSON.parse(row.json) as Record<string, any>;
      if (![o.f, o.at?.lat, o.at?.lon].every(few)) continue;
      compared++;
      expect(renderFor(s, o, { ...VIEWERS[0]!, only: null })).toBe(bySql.get(row.key)!);
    }
    expect(compared).toBeGreaterThan(100);
  });
});
