// The API contract in docs/api stays true to the code: endpoints.md is exactly what scripts/api-docs.ts generates
// from GET /_admin/api/openapi.json (and `--check` says so in its exit code), every link between the contract's
// files lands on a heading that exists, every `docs/api/<file>.md#<section>` the code cites exists, no line of the
// contract is over 160 characters, and no code cites the external documents the contract replaced.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ENDPOINTS_FILE, anchorOf, differenceHint, generateEndpoints } from "../../scripts/api-docs.ts";

const ROOT = resolve(import.meta.dir, "../..");
const DOCS = join(ROOT, "docs/api");
const docFiles = () =>
  readdirSync(DOCS)
    .filter((f) => f.endsWith(".md"))
    .sort();

/** The anchors of a markdown file's headings, as GitHub makes them (a repeated heading gets -1, -2, ...). */
function anchorsOf(markdown: string): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    const m = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = anchorOf(m[1]!.replace(/`/g, ""));
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Files of the code that may cite the contract (sources, tests, scripts, pages, the sandbox, the example). */
function codeFiles(): string[] {
  const out: string[] = [];
  for (const dir of ["src", "tests", "scripts", "static", "sandbox", "examples"]) {
    for (const e of readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })) {
      const path = join(e.parentPath, e.name);
      if (e.isFile() && /\.(ts|tsx|js|mjs|html|css|json)$/.test(e.name) && !path.includes("node_modules")) out.push(path);
    }
  }
  return out;
}

let generated: string;
let tmp: string;
beforeAll(async () => {
  generated = await generateEndpoints();
  tmp = mkdtempSync(join(tmpdir(), "burrow-api-docs-test-"));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("the generated part", () => {
  test("docs/api/endpoints.md is what `npm run docs:api` generates from /_admin/api/openapi.json", () => {
    const current = readFileSync(ENDPOINTS_FILE, "utf8");
    const drift =
      current === generated ? [] : ["docs/api/endpoints.md is out of date: run `npm run docs:api`", ...differenceHint(current, generated)];
    expect(drift).toEqual([]);
  });

  test("it lists every operation of the document, sorted, with the statuses it documents", () => {
    expect(generated).toContain("| GET | `/{schema}/{id}` | Read one object by key | 200, 400, 401, 404 |");
    expect(generated).toContain("| POST | `/_admin/api/login` | Log in as an admin | 200, 401, 429 |");
    const rows = generated.split("\n").filter((l) => /^\| (GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS) \|/.test(l));
    expect(rows.length).toBeGreaterThan(100);
    // Within a tag's table, rows are ordered by path.
    const datastore = generated.slice(generated.indexOf("## datastore"), generated.indexOf("\n## ", generated.indexOf("## datastore") + 1));
    const paths = [...datastore.matchAll(/^\| \w+ \| `([^`]+)`/gm)].map((m) => m[1]!);
    expect(paths).toEqual([...paths].sort());
  });

  test("--check exits 0 on the generated text and 1, with a hint, on an altered one", () => {
    const file = join(tmp, "endpoints.md");
    const check = () =>
      Bun.spawnSync([process.execPath, "run", join(ROOT, "scripts/api-docs.ts"), "--check", "--file", file], {
        cwd: ROOT,
        stdout: "pipe",
        stderr: "pipe",
      });
    writeFileSync(file, generated);
    const same = check();
    expect([same.exitCode, same.stdout.toString()]).toEqual([0, `${file} is up to date\n`]);
    writeFileSync(file, generated.replace("Read one object by key", "Read one object by its key"));
    const altered = check();
    const err = altered.stderr.toString();
    expect(altered.exitCode).toBe(1);
    expect(err).toContain("npm run docs:api");
    expect(err).toContain("- | GET | `/{schema}/{id}` | Read one object by its key |");
    expect(err).toContain("+ | GET | `/{schema}/{id}` | Read one object by key |");
  }, 60_000);
});

describe("the handwritten part", () => {
  test("no line of docs/api/*.md is over 160 characters", () => {
    const long = docFiles().flatMap((f) =>
      readFileSync(join(DOCS, f), "utf8")
        .split("\n")
        .flatMap((line, i) => (line.length > 160 ? [`${f}:${i + 1} (${line.length})`] : [])),
    );
    expect(long).toEqual([]);
  });

  test("every link between the contract's files lands on a file and a heading that exist", () => {
    const anchors = new Map(docFiles().map((f) => [f, anchorsOf(readFileSync(join(DOCS, f), "utf8"))]));
    const broken: string[] = [];
    for (const f of docFiles()) {
      for (const m of readFileSync(join(DOCS, f), "utf8").matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/.test(target)) continue;
        const [file, anchor] = target.startsWith("#") ? [f, target.slice(1)] : (target.split("#") as [string, string | undefined]);
        const known = anchors.get(file!);
        if (!known || (anchor !== undefined && !known.has(anchor))) broken.push(`${f}: ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });

  test("every docs/api citation in the code names a file and section that exist", () => {
    const anchors = new Map(docFiles().map((f) => [f, anchorsOf(readFileSync(join(DOCS, f), "utf8"))]));
    const broken: string[] = [];
    let cited = 0;
    for (const path of codeFiles()) {
      for (const m of readFileSync(path, "utf8").matchAll(/docs\/api\/([a-z0-9-]+\.md)(?:#([a-z0-9_-]+))?/g)) {
        cited++;
        const known = anchors.get(m[1]!);
        if (!known || (m[2] !== undefined && !known.has(m[2]))) broken.push(`${path.slice(ROOT.length + 1)}: ${m[0]}`);
      }
    }
    expect(broken).toEqual([]);
    expect(cited).toBeGreaterThan(20);
  });

  test("no code cites the external documents the contract replaced", () => {
    // Spelled in pieces so that this file does not match itself.
    const names = ["product", "behaviour", "seed"].map((n) => `${n}\\.md`).concat(["shared/" + "spec"]);
    const pattern = new RegExp(names.join("|"));
    const found = codeFiles().flatMap((path) =>
      readFileSync(path, "utf8")
        .split("\n")
        .flatMap((line, i) => (pattern.test(line) ? [`${path.slice(ROOT.length + 1)}:${i + 1}`] : [])),
    );
    expect(found).toEqual([]);
  });
});
