// Live pull from a local Parse Server (`burrow import --from-parse`): a real Parse Server 9 on PostgreSQL
// (tests/helpers/parse-server.ts) holding 100,000 objects in 5 classes, created through Parse's schemas API and filled
// in PostgreSQL directly (creating them one by one through Parse would take longer than the pull itself), with 1,000
// files uploaded through Parse's files API and a relation on one class. Measures the whole pull (objects/s), a class of
// plain objects alone, and the class with the files alone (files/s). Usage:
//   bun run scripts/bench/parse-pull.ts [--objects 100000] [--files 1000] [--binary] [--build] [--write]

import { Database } from "bun:sqlite";
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { tempDir } from "../../tests/helpers/app.ts";
import { startParseServer } from "../../tests/helpers/parse-server.ts";
import { ROOT, cpuCounters, ensureBinary, machine, stealPercent, table, writeSection } from "./env.ts";

const { values } = parseArgs({
  options: {
    objects: { type: "string", default: "100000" },
    files: { type: "string", default: "1000" },
    binary: { type: "boolean", default: false },
    build: { type: "boolean", default: false },
    write: { type: "boolean", default: false },
  },
});
const total = Math.min(1_000_000, Math.max(1000, Number(values.objects)));
const files = Math.min(total / 10, Math.max(10, Number(values.files)));
const cmd = values.binary ? [ensureBinary(values.build!)] : [process.execPath, join(ROOT, "src/main.ts")];
const dir = tempDir("burrow-parse-pull-bench-");

// Shares of the objects: authors (with a relation to 3 posts each), posts (a pointer to an author), comments (a
// pointer to a post), tags, and photos (a pointer to a post and a file each).
const authors = Math.round(total * 0.1);
const photos = files;
const tags = Math.round(total * 0.09);
const posts = Math.round(total * 0.4);
const comments = total - authors - photos - tags - posts;

const parse = await startParseServer();
const psql = join(
  execFileSync("node", [join(ROOT, "scripts/install-postgres.mjs")], { encoding: "utf8" })
    .trim()
    .split("\n")
    .pop()!,
  "psql",
);
const sql = (text: string) => execFileSync(psql, [parse.databaseURI, "-v", "ON_ERROR_STOP=1", "-q", "-c", text], { stdio: "pipe" });
const rest = async (method: string, path: string, body?: unknown, o: { contentType?: string } = {}) => {
  const r = await parse.rest(method, path, body, { master: true, ...o });
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
};

try {
  const seeded = performance.now();
  const schemas: Record<string, Record<string, unknown>> = {
    Author: { name: { type: "String" }, age: { type: "Number" }, favourites: { type: "Relation", targetClass: "Post" } },
    Post: {
      title: { type: "String" },
      body: { type: "String" },
      views: { type: "Number" },
      author: { type: "Pointer", targetClass: "Author" },
      at: { type: "Date" },
      where: { type: "GeoPoint" },
    },
    Comment: {
      text: { type: "String" },
      post: { type: "Pointer", targetClass: "Post" },
      likes: { type: "Number" },
      flags: { type: "Array" },
    },
    Tag: { label: { type: "String" }, meta: { type: "Object" } },
    Photo: { caption: { type: "String" }, post: { type: "Pointer", targetClass: "Post" }, image: { type: "File" } },
  };
  for (const [className, fields] of Object.entries(schemas)) await rest("POST", `/schemas/${className}`, { className, fields });
  const id = (p: string) => `'${p}' || lpad(i::text, 8, '0')`;
  sql(`INSERT INTO "Author" ("objectId", "createdAt", "updatedAt", name, age)
       SELECT ${id("a")}, now(), now(), 'author ' || i, i % 90 FROM generate_series(1, ${authors}) i`);
  sql(`INSERT INTO "Post" ("objectId", "createdAt", "updatedAt", title, body, views, author, at, "where")
       SELECT ${id("p")}, now(), now(), 'post ' || i, repeat('lorem ipsum ', 8), i % 1000, 'a' || lpad((1 + i % ${authors})::text, 8, '0'),
              now() - (i || ' minutes')::interval, point((i % 360) - 180, (i % 170) - 85) FROM generate_series(1, ${posts}) i`);
  sql(`INSERT INTO "Comment" ("objectId", "createdAt", "updatedAt", text, post, likes, flags)
       SELECT ${id("c")}, now(), now(), 'comment ' || i, 'p' || lpad((1 + i % ${posts})::text, 8, '0'), i % 50, '["new", "ok"]'::jsonb
       FROM generate_series(1, ${comments}) i`);
  sql(`INSERT INTO "Tag" ("objectId", "createdAt", "updatedAt", label, meta)
       SELECT ${id("t")}, now(), now(), 'tag ' || i, jsonb_build_object('n', i) FROM generate_series(1, ${tags}) i`);
  sql(`INSERT INTO "_Join:favourites:Author" ("relatedId", "owningId")
       SELECT 'p' || lpad((1 + (i * 7 + k) % ${posts})::text, 8, '0'), 'a' || lpad(i::text, 8, '0')
       FROM generate_series(1, ${authors}) i, generate_series(0, 2) k`);
  // The files through Parse's files API (~10 KB each), then the photos that hold them.
  const names: string[] = [];
  const bytes = new Uint8Array(10_000).map((_, i) => i % 251);
  for (let i = 0; i < photos; i += 16)
    names.push(
      ...(await Promise.all(
        Array.from(
          { length: Math.min(16, photos - i) },
          async () => (await rest("POST", "/files/photo.jpg", bytes, { contentType: "image/jpeg" })).name as string,
        ),
      )),
    );
  const photoRows = names.map(
    (n, i) =>
      `('${`f${String(i + 1).padStart(8, "0")}`}', now(), now(), 'photo ${i}', 'p${String(1 + (i % posts)).padStart(8, "0")}', '${n}')`,
  );
  sql(`INSERT INTO "Photo" ("objectId", "createdAt", "updatedAt", caption, post, image) VALUES ${photoRows.join(",")}`);
  const seedSeconds = (performance.now() - seeded) / 1000;

  const pull = (data: string, extra: string[] = []) => {
    const started = performance.now();
    const p = Bun.spawnSync(
      ["/usr/bin/time", "-f", "%M", ...cmd, "import", "--from-parse", parse.url, "--parse-app-id", parse.appId, "--dir", data, ...extra],
      { env: { ...process.env, BURROW_PARSE_MASTER_KEY: parse.masterKey }, stderr: "pipe", stdout: "pipe" },
    );
    const seconds = (performance.now() - started) / 1000;
    const err = p.stderr.toString();
    if (p.exitCode !== 0) throw new Error(`pull failed (${p.exitCode}):\n${err}`);
    const rows = Number(/imported (\d+) row/.exec(err)?.[1] ?? 0);
    const maxRssMb = Number(err.trim().split("\n").pop()) / 1024;
    return { seconds, rows, maxRssMb, err };
  };
  const cpu0 = cpuCounters();
  const all = pull(join(dir, "all"));
  const cpu1 = cpuCounters();
  const plain = pull(join(dir, "comments"), ["--schema", "Comment"]);
  const cpu2 = cpuCounters();
  const withFiles = pull(join(dir, "photos"), ["--schema", "Photo"]);
  const cpu3 = cpuCounters();
  const related = pull(join(dir, "authors"), ["--schema", "Author"]);
  const cpu4 = cpuCounters();
  if (all.rows !== total) throw new Error(`the pull imported ${all.rows} of ${total} objects:\n${all.err}`);
  if (!all.err.includes(`files: ${photos} copied`)) throw new Error(`not every file was copied:\n${all.err}`);
  const favourites = new Database(join(dir, "all", "development.db"), { readonly: true })
    .query("SELECT count(*) AS n FROM o_author WHERE json_array_length(favourites) = 3")
    .get() as { n: number };
  if (favourites.n !== authors) throw new Error(`${favourites.n} of ${authors} authors have their 3 favourites`);

  const mb = (n: number) => `${n.toFixed(0)} MB`;
  type Cpu = ReturnType<typeof cpuCounters>;
  const row = (name: string, p: ReturnType<typeof pull>, filesPerSecond: number | "", from: Cpu, to: Cpu) => [
    name,
    p.rows,
    `${p.seconds.toFixed(1)} s`,
    Math.round(p.rows / p.seconds),
    filesPerSecond,
    mb(p.maxRssMb),
    stealPercent(from, to),
  ];
  const md = [
    `${machine()}; 2 cores shared by Parse Server 9.10 (Node ${execFileSync("node", ["--version"], { encoding: "utf8" }).trim()}), PostgreSQL 15 and the import, all on loopback. ${total.toLocaleString("en")} objects in 5 classes (${authors.toLocaleString("en")} Author with a relation of 3 posts each, ${posts.toLocaleString("en")} Post with a pointer, a date and a geopoint, ${comments.toLocaleString("en")} Comment, ${tags.toLocaleString("en")} Tag, ${photos.toLocaleString("en")} Photo each with a 10 KB file), seeded in ${seedSeconds.toFixed(0)} s (schemas and files through Parse's API, rows in PostgreSQL). \`burrow import --from-parse\` (${values.binary ? "the built binary" : "from source"}) into a fresh data directory with the local file store; pages of 500 objects in objectId order, relation members and files 8 requests at a time.`,
    "",
    table(
      ["pull", "objects", "time", "objects/s", "files/s", "max RSS", "CPU steal"],
      [
        row("everything (5 classes, relations, files, dangling checks)", all, "", cpu0, cpu1),
        row("Comment alone (plain objects and a pointer)", plain, "", cpu1, cpu2),
        row("Photo alone (one 10 KB file each)", withFiles, Math.round(photos / withFiles.seconds), cpu2, cpu3),
        row("Author alone (a relation: one $relatedTo query per object)", related, "", cpu3, cpu4),
      ],
    ),
  ].join("\n");
  console.log(md);
  if (values.write) writeSection("parse-pull", md);
} finally {
  await parse.stop();
  rmSync(dir, { recursive: true, force: true });
}
