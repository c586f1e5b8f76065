// The burrow command from source: help, config errors, keys, admin create, schema apply/export, deploy.

import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../helpers/app.ts";
import { runCli } from "../helpers/spawn.ts";

const dir = tempDir("burrow-cli-");
const data = join(dir, "data");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("help and errors", () => {
  test("--help lists every command; each command has its own --help", async () => {
    const r = await runCli(["--help"]);
    expect(r.code).toBe(0);
    for (const c of ["serve", "admin create", "keys", "schema apply", "schema export", "deploy", "--no-infer", "BURROW_BODY_LIMIT"])
      expect(r.stdout).toContain(c);
    for (const c of [["serve"], ["admin", "create"], ["keys"], ["schema", "apply"], ["schema", "export"], ["deploy"]]) {
      const h = await runCli([...c, "--help"]);
      expect([c, h.code]).toEqual([c, 0]);
      expect(h.stdout).toContain(`burrow ${c.join(" ")}`);
    }
  });

  test("bad configuration is one line on stderr and exit code 2", async () => {
    const cases: [string[], Record<string, string>][] = [
      [["serve", "--http", "nope"], {}],
      [["serve", "--bogus"], {}],
      [["serve"], { BURROW_BODY_LIMIT: "huge" }],
      [["frobnicate"], {}],
      [["admin", "create", "--email", "x"], {}],
    ];
    for (const [args, env] of cases) {
      const r = await runCli(args, { BURROW_DIR: data, ...env });
      expect([args, r.code]).toEqual([args, 2]);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toStartWith("burrow: ");
    }
  });
});

describe("keys and admins", () => {
  test("keys are generated once and stable; env variables pin them", async () => {
    const a = await runCli(["keys", "--dir", data]);
    const b = await runCli(["keys", "--json"], { BURROW_DIR: data });
    expect(a.code).toBe(0);
    const k = JSON.parse(b.stdout);
    expect(a.stdout).toContain(k.development.publicKey);
    expect(a.stdout).toContain(k.production.privateKey);
    const pinned = await runCli(["keys", "--json", "--dir", data], { BURROW_PROD_PRIVATE_KEY: "pinned-prod-private" });
    expect(JSON.parse(pinned.stdout).production).toEqual({ publicKey: k.production.publicKey, privateKey: "pinned-prod-private" });
  });

  test("admin create creates, then updates", async () => {
    const a = await runCli(["admin", "create", "--email", "Boss@Example.com", "--password", "first-password", "--dir", data]);
    expect(a.stdout.trim()).toBe("admin boss@example.com created (owner)");
    const b = await runCli(["admin", "create", "--email", "boss@example.com", "--password", "second-password", "--dir", data]);
    expect(b.stdout.trim()).toBe("admin boss@example.com updated (owner)");
  });

  test("admin create --role: a new admin's role; an update keeps the role unless --role is given; the last owner stays", async () => {
    const help = await runCli(["admin", "create", "--help"]);
    expect(help.stdout).toContain("--role owner|editor|viewer");
    const v = await runCli([
      "admin",
      "create",
      "--email",
      "viewer@example.com",
      "--password",
      "viewer-password",
      "--role",
      "viewer",
      "--dir",
      data,
    ]);
    expect([v.code, v.stdout.trim()]).toEqual([0, "admin viewer@example.com created (viewer)"]);
    const kept = await runCli(["admin", "create", "--email", "viewer@example.com", "--password", "another-password", "--dir", data]);
    expect(kept.stdout.trim()).toBe("admin viewer@example.com updated (viewer)");
    const promoted = await runCli([
      "admin",
      "create",
      "--email",
      "viewer@example.com",
      "--password",
      "another-password",
      "--role=editor",
      "--dir",
      data,
    ]);
    expect(promoted.stdout.trim()).toBe("admin viewer@example.com updated (editor)");
    const last = await runCli([
      "admin",
      "create",
      "--email",
      "boss@example.com",
      "--password",
      "second-password",
      "--role",
      "viewer",
      "--dir",
      data,
    ]);
    expect(last.code).toBe(1);
    expect(last.stderr.trim()).toBe(
      "burrow: boss@example.com is the last owner and cannot become a viewer: make another admin an owner first",
    );
    const refused: [string[], string][] = [
      [["--role", "Owner"], "burrow: --role must be one of owner, editor, viewer"],
      [["--password", "p".repeat(1025)], "burrow: admin create needs --password of 8 to 1024 characters"],
    ];
    for (const [args, message] of refused) {
      const r = await runCli(["admin", "create", "--email", "x@example.com", "--password", "long-enough", ...args, "--dir", data]);
      expect([args[0], r.code, r.stderr.trim()]).toEqual([args[0], 2, message]);
    }
  }, 60_000);
});

describe("schemas and deploy", () => {
  const defs = join(dir, "defs");
  mkdirSync(defs, { recursive: true });
  writeFileSync(
    join(defs, "author.json"),
    JSON.stringify({ name: "author", fields: { name: { type: "string" }, books: { type: "relationship", schema: "book", many: true } } }),
  );
  writeFileSync(
    join(defs, "book.json"),
    JSON.stringify({
      name: "book",
      fields: { title: { type: "string" }, author: { type: "relationship", schema: "author" } },
      indexes: [["title"]],
    }),
  );

  test("schema apply prints the plan, is idempotent, and --dry-run changes nothing", async () => {
    const dry = await runCli(["schema", "apply", defs, "--dry-run", "--dir", data]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain("plan: 2 schema(s) would change");
    const first = await runCli(["schema", "apply", defs, "--dir", data]);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain("+ create schema author");
    expect(first.stdout).toContain("+ book index (title)");
    const again = await runCli(["schema", "apply", defs, "--dir", data]);
    expect(again.stdout).toContain("= author (unchanged)");
    expect(again.stdout).toContain("applied: 0 schema(s) changed, 2 unchanged");
  });

  test("a destructive apply needs --force", async () => {
    const f = join(dir, "book-v2.json");
    writeFileSync(f, JSON.stringify({ name: "book", fields: { author: { type: "relationship", schema: "author" } } }));
    const refused = await runCli(["schema", "apply", f, "--dir", data]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('remove field "title"');
    const forced = await runCli(["schema", "apply", f, "--force", "--dir", data]);
    expect(forced.code).toBe(0);
    expect(forced.stdout).toContain("- book.title (string)");
  });

  test("schema export round-trips and deploy snapshots development", async () => {
    const out = join(dir, "export");
    const e = await runCli(["schema", "export", "--out", out, "--dir", data]);
    expect(e.code).toBe(0);
    const exported = JSON.parse(readFileSync(join(out, "author.json"), "utf8"));
    expect(exported.fields.books).toEqual({ type: "relationship", schema: "book", many: true });
    const reapply = await runCli(["schema", "apply", out, "--dir", data]);
    expect(reapply.stdout).toContain("applied: 0 schema(s) changed");

    const d = await runCli(["deploy", "--dir", data]);
    expect(d.code).toBe(0);
    expect(d.stdout).toContain("deployed development as production version 1");
    const v1 = await runCli(["schema", "export", "--version", "1", "--dir", data]);
    expect(
      JSON.parse(v1.stdout)
        .map((s: any) => s.name)
        .sort(),
    ).toEqual(["aclrole", "author", "book", "user"]);
    const none = await runCli(["schema", "export", "--version", "5", "--dir", data]);
    expect(none.code).toBe(1);
  });
});
