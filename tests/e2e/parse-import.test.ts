// Moving in from a real Parse Server 9 on PostgreSQL (tests/helpers/parse-server.ts), seeded through Parse's REST API
// with users (one deleted later), a role, pointers, relations, fields that differ only in case, a GeoPoint, a Date,
// an Array, an Object, a file and installations. Then, through the real CLI: today's dashboard export (bare arrays
// with className, no _Join files) reports what it cannot carry; the live pull (`--from-parse`) brings everything,
// checked field by field, the file's bytes from Burrow's file store, the installations as push tokens, a mongoexport's
// password hashes merged; a pull killed mid-class resumes with nothing twice.

import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeTestApp, tempDir } from "../helpers/app.ts";
import { type ParseServer, startParseServer } from "../helpers/parse-server.ts";
import { startS3 } from "../helpers/s3rver.ts";
import { runCli } from "../helpers/spawn.ts";

const dir = tempDir("burrow-parse-import-");
let parse: ParseServer;
const id: Record<string, string> = {};
const PHOTO = new Uint8Array([137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 73, 72, 68, 82, 1, 2, 3, 255]);
const IOS_TOKEN = "ab".repeat(32);

const pointer = (className: string, objectId: string) => ({ __type: "Pointer", className, objectId });

async function seed(): Promise<void> {
  const ok = async (method: string, path: string, body?: unknown, opts = {}) => {
    const r = await parse.rest(method, path, body, opts);
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  for (const name of ["ann", "bob", "carol"]) {
    const u = await ok("POST", "/users", { username: name, password: `${name} parse password`, email: `${name}@example.com` });
    id[name] = u.objectId;
  }
  const admins = await ok(
    "POST",
    "/roles",
    {
      name: "admins",
      ACL: { "*": { read: true } },
      users: { __op: "AddRelation", objects: [pointer("_User", id.ann!), pointer("_User", id.bob!)] },
    },
    { master: true },
  );
  id.admins = admins.objectId;
  const team = await ok("POST", "/classes/Team", {
    name: "Red",
    members: { __op: "AddRelation", objects: [pointer("_User", id.ann!), pointer("_User", id.carol!)] },
  });
  id.team = team.objectId;
  const photo = await ok("POST", "/files/photo.png", PHOTO, { contentType: "image/png" });
  const scores = [
    {
      score: 10,
      Score: 11,
      playerName: "ann",
      player: pointer("_User", id.ann!),
      team: pointer("Team", id.team!),
      location: { __type: "GeoPoint", latitude: 48.85, longitude: 2.35 },
      when: { __type: "Date", iso: "2025-05-01T10:00:00.000Z" },
      tags: ["a", "b"],
      meta: { level: 3 },
      photo: { __type: "File", name: photo.name, url: photo.url },
    },
    { score: 5, player: pointer("_User", id.carol!) },
    { Score: 7, player: pointer("_User", id.bob!) },
  ];
  for (const [i, s] of scores.entries()) id[`score${i}`] = (await ok("POST", "/classes/GameScore", s)).objectId;
  await ok("POST", "/installations", { deviceType: "ios", deviceToken: IOS_TOKEN, user: pointer("_User", id.ann!) }, { master: true });
  await ok(
    "POST",
    "/installations",
    { deviceType: "android", pushType: "gcm", deviceToken: "fcm-token-of-bob:APA91b", owner: pointer("_User", id.bob!) },
    { master: true },
  );
  await ok("POST", "/installations", { deviceType: "winphone", deviceToken: "https://notify.example/abc" }, { master: true });
  // carol leaves: her score's pointer and her team membership now name an object that no longer exists.
  await ok("DELETE", `/classes/_User/${id.carol}`, undefined, { master: true });
}

beforeAll(async () => {
  parse = await startParseServer();
  await seed();
}, 300_000);

afterAll(async () => {
  await parse?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function cli(args: string[], data: string, env: Record<string, string> = {}) {
  const r = await runCli([...args, "--dir", data], env);
  if (r.code !== 0) throw new Error(`burrow ${args.join(" ")}: exit ${r.code}\n${r.stdout}\n${r.stderr}`);
  return r;
}

const pull = (data: string, extra: string[] = [], env: Record<string, string> = {}) =>
  runCli(["import", "--from-parse", parse.url, "--parse-app-id", parse.appId, ...extra, "--dir", data], {
    BURROW_PARSE_MASTER_KEY: parse.masterKey,
    ...env,
  });

function rows(data: string, sql: string): Record<string, unknown>[] {
  const db = new Database(join(data, "development.db"), { readonly: true });
  try {
    return db.query(sql).all() as Record<string, unknown>[];
  } finally {
    db.close();
  }
}

describe("moving in from a running Parse Server", () => {
  test("today's dashboard export: bare arrays with className; what it lacks is reported, nothing merged", async () => {
    // What the dashboard's Export -> .json writes: each class's objects as one JSON array, className on each.
    const exp = join(dir, "dashboard");
    mkdirSync(exp, { recursive: true });
    for (const [cls, path] of [
      ["_User", "/users"],
      ["_Role", "/roles"],
      ["Team", "/classes/Team"],
      ["GameScore", "/classes/GameScore"],
    ] as const) {
      const r = await parse.rest("GET", `${path}?limit=1000`, undefined, { master: true });
      writeFileSync(join(exp, `${cls}.json`), JSON.stringify(r.body.results.map((o: object) => ({ ...o, className: cls }))));
    }
    const data = join(dir, "dashboard-data");
    const r = await cli(["import", exp], data);
    expect(r.stderr).toContain("imported 7 row(s) (user 2, aclrole 1, gamescore 3, team 1)");
    expect(r.stderr).not.toMatch(/classname/i);
    expect(r.stderr).toContain("fields GameScore.score, GameScore.Score lowercase alike: imported as gamescore.score, gamescore.score_2");
    expect(r.stderr).toContain("GameScore.player: 1 reference(s) to _User objects that do not exist (deleted in Parse), left out");
    for (const [cls, field] of [
      ["_Role", "users"],
      ["Team", "members"],
    ])
      expect(r.stderr).toContain(
        `${cls}.${field}: a relation to _User whose members this export does not hold (no _Join:${field}:${cls} file`,
      );
  }, 60_000);

  test("the live pull: schema, objects, relations, files, users with merged hashes, roles and installations", async () => {
    // A mongoexport of _User carries the bcrypt hashes the REST API never gives: ann's is merged in.
    const mongo = join(dir, "mongo");
    mkdirSync(mongo, { recursive: true });
    const annHash = await Bun.password.hash("ann mongo password", { algorithm: "bcrypt", cost: 4 });
    writeFileSync(join(mongo, "_User.json"), `${JSON.stringify({ _id: id.ann, username: "ann", _hashed_password: annHash })}\n`);
    const data = join(dir, "pull");
    const r = await pull(data, ["--mongo-export", mongo]);
    expect([r.code, r.stderr]).toEqual([0, expect.stringContaining("imported 7 row(s) (user 2, aclrole 1, gamescore 3, team 1)")]);
    expect(r.stderr).toContain("class _Session: skipped");
    expect(r.stderr).toContain("1 user(s) of user imported with their password hash");
    expect(r.stderr).toContain("1 user(s) of user imported without a password");
    expect(r.stderr).toContain("fields GameScore.score, GameScore.Score lowercase alike: imported as gamescore.score, gamescore.score_2");
    expect(r.stderr).toContain("GameScore.player: 1 reference(s) to _User objects that do not exist (deleted in Parse), left out");
    expect(r.stderr).toContain("files: 1 copied into the file store");
    expect(r.stderr).toContain(
      "installations: 2 push tokens imported (ios 1, androidgcm 1), 2 bound to users; skipped 1: deviceType winphone has no Burrow push provider",
    );
    expect(r.stderr).not.toContain("a relation to");

    const out = join(dir, "pull-out");
    await cli(["export", "--out", out], data);
    const read = (schema: string) =>
      readFileSync(join(out, `${schema}.jsonl`), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as Record<string, any>);
    const users = read("user");
    expect(users.map((u) => [u.username, u.email]).sort()).toEqual([
      ["ann", "ann@example.com"],
      ["bob", "bob@example.com"],
    ]);
    expect(read("aclrole").map((x) => [x.aclrole_id, [...x.users].sort()])).toEqual([["admins", ["ann", "bob"]]]);
    expect(read("team").map((x) => [x.team_id, x.name, x.members])).toEqual([[id.team, "Red", ["ann"]]]);
    const scores = new Map(read("gamescore").map((x) => [x.gamescore_id, x]));
    const first = scores.get(id.score0!)!;
    expect(first).toMatchObject({
      score: 10,
      score_2: 11,
      playername: "ann",
      player: "ann",
      team: id.team,
      location: { lat: 48.85, lon: 2.35 },
      when: Date.parse("2025-05-01T10:00:00.000Z"),
      tags: ["a", "b"],
      meta: JSON.stringify({ level: 3 }),
    });
    expect(first.photo).toMatch(/\/_files\/development\/[0-9a-f]{32}\/photo\.png$/);
    expect([scores.get(id.score1!)!.score, scores.get(id.score1!)!.player]).toEqual([5, undefined]);
    expect([scores.get(id.score2!)!.score_2, scores.get(id.score2!)!.player]).toEqual([7, "bob"]);
    expect(rows(data, "SELECT schema, object, field, content_type, size FROM _burrow_files")).toEqual([
      { schema: "gamescore", object: id.score0, field: "photo", content_type: "image/png", size: PHOTO.length },
    ]);
    expect(rows(data, "SELECT type, token, user FROM _burrow_push_tokens ORDER BY type")).toEqual([
      { type: "androidgcm", token: "fcm-token-of-bob:APA91b", user: "bob" },
      { type: "ios", token: IOS_TOKEN, user: "ann" },
    ]);
    // Through the API: the file's bytes from Burrow's store, and ann signs in with her password from the mongoexport.
    const t = await makeTestApp({ dir: data });
    try {
      const file = await t.app.handle(new Request(`http://localhost${new URL(first.photo, "http://localhost").pathname}`));
      expect([file.status, file.headers.get("content-type")]).toEqual([200, "image/png"]);
      expect(new Uint8Array(await file.arrayBuffer())).toEqual(PHOTO);
      const login = await t.request("POST", "/user/accessToken", {
        raw: new URLSearchParams({ username: "ann", password: "ann mongo password", token_type: "mac" }).toString(),
        headers: { "content-type": "application/x-www-form-urlencoded" },
      });
      expect(login.status).toBe(200);
    } finally {
      await t.close();
    }
  }, 90_000);

  test("a wrong master key, a URL that is no Parse Server and mixed-up flags are one clear line each", async () => {
    const data = join(dir, "pull-bad");
    const wrongKey = await pull(data, [], { BURROW_PARSE_MASTER_KEY: "not-the-key" });
    expect([wrongKey.code, wrongKey.stderr.trim().split("\n").at(-1)]).toEqual([
      2,
      expect.stringMatching(/^burrow: Parse Server GET \/schemas: 40[13] /),
    ]);
    const notParse = await runCli(["import", "--from-parse", new URL(parse.url).origin, "--parse-app-id", parse.appId, "--dir", data], {
      BURROW_PARSE_MASTER_KEY: parse.masterKey,
    });
    expect([notParse.code, notParse.stderr]).toEqual([2, expect.stringContaining("burrow: Parse Server GET /schemas: 404")]);
    const mixed = await runCli(["import", "some-dir", "--parse-app-id", "x", "--dir", data]);
    expect([mixed.code, mixed.stderr.trim()]).toEqual([2, "burrow: --parse-app-id goes with --from-parse <serverURL>"]);
    const noKey = await runCli(["import", "--from-parse", parse.url, "--parse-app-id", "x", "--dir", data]);
    expect([noKey.code, noKey.stderr.trim()]).toEqual([
      2,
      "burrow: --from-parse needs --parse-master-key <key> (or BURROW_PARSE_MASTER_KEY)",
    ]);
  }, 60_000);

  test("with the S3 file store, the pull copies the file into the bucket", async () => {
    const s3 = await startS3();
    try {
      const data = join(dir, "pull-s3");
      const files = {
        store: "s3",
        s3: {
          endpoint: s3.endpoint,
          bucket: s3.bucket,
          accessKeyId: s3.accessKeyId,
          secretAccessKey: s3.secretAccessKey,
          region: "us-east-1",
        },
      };
      const setup = await makeTestApp({ dir: data });
      expect((await setup.admin("PUT", "/settings/development", { files })).status).toBe(200);
      await setup.close();
      const r = await pull(data, ["--schema", "GameScore"]);
      expect([r.code, r.stderr]).toEqual([0, expect.stringContaining("files: 1 copied into the file store")]);
      const [row] = rows(data, "SELECT store, url FROM _burrow_files");
      expect(row!.store).toBe("s3");
      const t = await makeTestApp({ dir: data });
      try {
        // Files in S3 are answered with a redirect to a signed URL of the bucket.
        const answer = await t.app.handle(new Request(`http://localhost${row!.url}`));
        expect(answer.status).toBe(302);
        const file = await fetch(answer.headers.get("location")!);
        expect([file.status, new Uint8Array(await file.arrayBuffer())]).toEqual([200, PHOTO]);
      } finally {
        await t.close();
      }
    } finally {
      await s3.stop();
    }
  }, 60_000);

  test("a pull killed mid-class resumes after the last committed objectId, with nothing twice", async () => {
    const data = join(dir, "pull-resume");
    // Batches of one object: users 1 and 2 (then the class's closing checkpoint), the role (and its), GameScore 1, 2: killed.
    const killed = await pull(data, ["--batch-size", "1"], { BURROW_IMPORT_CRASH_AFTER_BATCHES: "7" });
    expect(killed.code).not.toBe(0);
    expect(rows(data, "SELECT count(*) AS n FROM o_gamescore")).toEqual([{ n: 2 }]);
    const again = await pull(data, ["--batch-size", "1"]);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain("GameScore: resuming after object 2 (2 rows imported before)");
    expect(again.stderr).toContain("_User: already imported into user (2 rows, 0 rejected)");
    const counts = rows(
      data,
      "SELECT (SELECT count(*) FROM o_user) AS users, (SELECT count(*) FROM o_gamescore) AS scores, (SELECT count(*) FROM o_team) AS teams, (SELECT count(*) FROM _burrow_files) AS files",
    );
    expect(counts).toEqual([{ users: 2, scores: 3, teams: 1, files: 1 }]);
    const third = await pull(data);
    expect(third.stderr).toContain("imported 0 row(s)");
  }, 90_000);
});
