// Geo queries on an R*Tree: [near] (sorted, distance in radians), [within] radius and box (also across the
// antimeridian), checked against a haversine reference; bad coordinates are 400.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { EARTH_RADIUS_KM, haversine } from "../../src/datastore/query/geo.ts";
import { makeTestApp, type TestApp } from "../helpers/app.ts";

let t: TestApp;
const places = [
  { place_id: "oslo", name: "Oslo", kind: "city", at: { lat: 59.9139, lon: 10.7522 } },
  { place_id: "bergen", name: "Bergen", kind: "city", at: { lat: 60.3913, lon: 5.3221 } },
  { place_id: "rome", name: "Rome", kind: "city", at: { lat: 41.9028, lon: 12.4964 } },
  { place_id: "suva", name: "Suva", kind: "city", at: { lat: -18.1248, lon: 178.4501 } },
  { place_id: "apia", name: "Apia", kind: "city", at: { lat: -13.8333, lon: -171.7667 } },
  { place_id: "pole", name: "Pole", kind: "base", at: { lat: 89.99, lon: 0 } },
  { place_id: "nowhere", name: "Nowhere", kind: "base" },
];

// Deterministic pseudo-random points over the whole globe.
let seed = 7;
const rnd = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
const randomPoints = Array.from({ length: 400 }, (_, i) => ({
  place_id: `r${i}`,
  name: `R${i}`,
  kind: "random",
  at: { lat: rnd() * 180 - 90, lon: rnd() * 360 - 180 },
}));

beforeAll(async () => {
  t = await makeTestApp();
  expect(
    (await t.admin("PUT", "/schemas/place", { fields: { name: { type: "string" }, kind: { type: "string" }, at: { type: "geopoint" } } }))
      .status,
  ).toBe(201);
  expect((await t.request("POST", "/place", { body: [...places, ...randomPoints] })).body.failed).toEqual([]);
});
afterAll(() => t.close());

async function get(query: string, headers: Record<string, string> = {}) {
  const r = await t.request("GET", `/place${query}`, { headers });
  if (r.status !== 200 && r.status !== 206) throw new Error(`${query}: ${r.status} ${r.text}`);
  return r.body as any[];
}

describe("near", () => {
  test("sorted by great-circle distance with distance in radians, matching haversine to 1e-9", async () => {
    const rs = await get("?kind=city&at[near]=59.9,10.7");
    expect(rs.map((p) => p.place_id)).toEqual(["oslo", "bergen", "rome", "apia", "suva"]);
    for (const p of rs) {
      const ref = haversine(59.9, 10.7, p.at.lat, p.at.lon);
      expect(Math.abs(p.at.distance - ref) / ref).toBeLessThan(1e-9);
    }
    const km = rs[1].at.distance * EARTH_RADIUS_KM;
    expect(km).toBeGreaterThan(300);
    expect(km).toBeLessThan(320);
  });

  test("an optional radius filters; ordering headers are ignored; objects without a location never match", async () => {
    const radius = 500 / EARTH_RADIUS_KM;
    const rs = await get(`?kind[in]=city,base&at[near]=59.9,10.7,${radius}`, { "x-service-orderby": "name:asc" });
    expect(rs.map((p) => p.place_id)).toEqual(["oslo", "bergen"]);
    expect((await get("?at[near]=0,0")).some((p) => p.place_id === "nowhere")).toBe(false);
  });

  test("random near queries agree with a brute-force reference", async () => {
    for (let i = 0; i < 25; i++) {
      const lat = rnd() * 170 - 85;
      const lon = rnd() * 358 - 179;
      const radius = rnd() * 0.8;
      const got = (await get(`?kind=random&at[near]=${lat},${lon},${radius}`)).map((p) => p.place_id);
      const want = randomPoints
        .map((p) => ({ id: p.place_id, d: haversine(lat, lon, p.at.lat, p.at.lon) }))
        .filter((p) => p.d <= radius)
        .sort((a, b) => a.d - b.d)
        .map((p) => p.id);
      expect(got).toEqual(want);
    }
  });

  test("Range pages through near results in distance order", async () => {
    const all = (await get("?kind=random&at[near]=10,20")).map((p) => p.place_id);
    const page = await t.request("GET", "/place?kind=random&at[near]=10,20", { headers: { range: "objects=10-19" } });
    expect(page.status).toBe(206);
    expect(page.headers.get("content-range")).toBe("objects 10-19/400");
    expect(page.body.map((p: any) => p.place_id)).toEqual(all.slice(10, 20));
  });
});

describe("within", () => {
  test("a radius (spherical cap), unordered but honouring X-Service-OrderBy, without distance", async () => {
    const rs = await get(`?at[within]=59.9,10.7,${500 / EARTH_RADIUS_KM}`, { "x-service-orderby": "name:desc" });
    expect(rs.map((p) => p.place_id)).toEqual(["oslo", "bergen"]);
    expect(rs[0].at.distance).toBeUndefined();
  });

  test("random caps and boxes agree with a brute-force reference", async () => {
    for (let i = 0; i < 25; i++) {
      const lat = rnd() * 170 - 85;
      const lon = rnd() * 358 - 179;
      const radius = rnd() * 1.2;
      const got = (await get(`?kind=random&at[within]=${lat},${lon},${radius}`)).map((p) => p.place_id).sort();
      const want = randomPoints
        .filter((p) => haversine(lat, lon, p.at.lat, p.at.lon) <= radius)
        .map((p) => p.place_id)
        .sort();
      expect(got).toEqual(want);

      const lat1 = rnd() * 150 - 80;
      const lat2 = Math.min(90, lat1 + rnd() * 40);
      const lon1 = rnd() * 359 - 180;
      const lon2 = rnd() * 359 - 180; // lon1 > lon2 crosses the antimeridian
      const box = (await get(`?kind=random&at[within]=${lat1},${lon1},${lat2},${lon2}`)).map((p) => p.place_id).sort();
      const inLon = (x: number) => (lon1 <= lon2 ? x >= lon1 && x <= lon2 : x >= lon1 || x <= lon2);
      const wantBox = randomPoints
        .filter((p) => p.at.lat >= lat1 && p.at.lat <= lat2 && inLon(p.at.lon))
        .map((p) => p.place_id)
        .sort();
      expect(box).toEqual(wantBox);
    }
  });

  test("a box across the antimeridian and a cap over the pole", async () => {
    expect((await get("?kind=city&at[within]=-20,170,-10,-170")).map((p) => p.place_id).sort()).toEqual(["apia", "suva"]);
    expect((await get(`?kind=base&at[within]=89,90,${(2 / 180) * Math.PI}`)).map((p) => p.place_id)).toEqual(["pole"]);
  });

  test("the R*Tree follows updates and deletes", async () => {
    await t.request("POST", "/place", { body: { place_id: "mover", kind: "moving", at: { lat: 1, lon: 1 } } });
    expect((await get("?kind=moving&at[within]=0,0,2,2")).map((p) => p.place_id)).toEqual(["mover"]);
    await t.request("PUT", "/place/mover", { body: { at: { lat: 50, lon: 50 } } });
    expect(await get("?kind=moving&at[within]=0,0,2,2")).toEqual([]);
    expect((await get("?kind=moving&at[within]=49,49,51,51")).map((p) => p.place_id)).toEqual(["mover"]);
    await t.request("PUT", "/place/mover", { body: { at: null } });
    expect(await get("?kind=moving&at[within]=49,49,51,51")).toEqual([]);
    await t.request("PUT", "/place/mover", { body: { at: { lat: 50, lon: 50 } } });
    await t.request("DELETE", "/place/mover");
    const rtree = await t.burrow.envDbs.development.execute(`SELECT count(*) AS n FROM "g$place$at"`);
    expect(Number(rtree.rows[0]!.n)).toBe(places.length - 1 + randomPoints.length);
  });

  test("queries use the R*Tree", async () => {
    const plan = await t.burrow.envDbs.development.execute({
      sql: `EXPLAIN QUERY PLAN SELECT 1 FROM o_place AS t WHERE t.rowid IN (SELECT id FROM "g$place$at" WHERE min_lat <= ? AND max_lat >= ? AND min_lon <= ? AND max_lon >= ?)`,
      args: [1, 0, 1, 0],
    });
    expect(plan.rows.map((r) => String(r.detail)).join(" | ")).toContain("VIRTUAL TABLE INDEX");
  });
});

describe("bad geo queries", () => {
  test("coordinates out of range and malformed values are 400 {error}", async () => {
    const cases: [string, string][] = [
      ["?at[near]=91,0", "Latitude"],
      ["?at[near]=-90.5,0", "Latitude"],
      ["?at[near]=0,180", "Longitude"],
      ["?at[near]=0,-180.1", "Longitude"],
      ["?at[within]=0,0,1,180", "Longitude"],
      ["?at[near]=a,b", "must be a number"],
      ["?at[near]=1", "takes"],
      ["?at[within]=1,2", "takes"],
      ["?at[within]=10,0,5,1", "lower left"],
      ["?at[near]=1,2,-1", "radius"],
      ["?name[near]=1,2", "geopoint"],
      ["?at=1", "geopoint"],
      ["?at[near]=1,2&at[near]=3,4", "only one [near]"],
      ["?[or1].at[near]=1,2&[or1].kind=city", "OR block"],
      ["?at[near]=NaN,1", "must be a number"],
      ["?at[near]=1e999,1", "Latitude"],
    ];
    for (const [query, msg] of cases) {
      const r = await t.request("GET", `/place${query}`);
      expect([query, r.status]).toEqual([query, 400]);
      expect(r.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expect(r.body.error).toContain(msg);
    }
  });
});
