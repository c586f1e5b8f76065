// burrow backup and burrow restore as real processes: a backup from a running server's directory, restore refused
// while a server holds the directory, restore into a new directory and a server on it with the data there, a
// damaged backup refused with the target left as it was, and --out.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { formatUpload } from "../../src/files/upload.ts";
import { KEYS, tempDir } from "../helpers/app.ts";
import { ROOT, runCli, startServerProcess, type ServerProcess } from "../helpers/spawn.ts";

const SOURCE = [process.execPath, join(ROOT, "src/main.ts")];
const dir = tempDir("burrow-backup-e2e-");
const data = join(dir, "data");
const env = (d: string) => ({
  BURROW_DIR: d,
  BURROW_DEV_PUBLIC_KEY: KEYS.devPublic,
  BURROW_DEV_PRIVATE_KEY: KEYS.devPrivate,
  BURROW_PROD_PUBLIC_KEY: KEYS.prodPublic,
  BURROW_PROD_PRIVATE_KEY: KEYS.prodPrivate,
  BURROW_LOG_LEVEL: "warn",
});
const api = (url: string, method: string, path: string, body?: unknown) =>
  fetch(`${url}${path}`, {
    method,
    headers: {
      accept: "application/vnd.service+json; version=0",
      "x-service-api-key": KEYS.devPublic,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

/** SHA-256 of every file under a directory (relative names), to see that nothing changed. */
function fingerprint(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const p = join(e.parentPath, e.name);
    out[p.slice(root.length)] = createHash("sha256").update(readFileSync(p)).digest("hex");
  }
  return out;
}

let server: ServerProcess;
let backupFile = "";
beforeAll(async () => {
  server = await startServerProcess(SOURCE, env(data));
  for (let i = 0; i < 20; i++) expect((await api(server.url, "POST", "/note", { note_id: `n${i}`, text: `note ${i}` })).status).toBe(201);
  const doc = await api(server.url, "POST", "/doc", {
    doc_id: "d1",
    file: formatUpload("text/plain", "hello.txt", new TextEncoder().encode("hello from the backup")),
  });
  expect(doc.status).toBe(201);
}, 60_000);
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("burrow backup and restore", () => {
  test("a backup of a running server's directory, with writes going on", async () => {
    let stop = false;
    let written = 0;
    const writes = (async () => {
      for (let i = 0; i < 500 && !stop; i++)
        if ((await api(server.url, "POST", "/note", { text: `during ${i}` })).status === 201) written++;
    })();
    const r = await runCli(["backup", "--dir", data]);
    stop = true;
    await writes;
    expect(r.code).toBe(0);
    backupFile = r.stdout.trim();
    expect(backupFile).toMatch(/\/backups\/burrow-\d{8}T\d{6}Z-[0-9a-f]{4}\.tar$/);
    expect(existsSync(backupFile)).toBe(true);
    // Not a terminal: one plain line, no progress bar.
    expect(r.stderr).toMatch(/^backup: [\d.]+ [KMG]?B in [\d.]+ s, burrow-/);
    expect(r.stderr).not.toContain("\r");
    expect(written).toBeGreaterThan(0);
  }, 60_000);

  test("restore refuses while a server holds the data directory", async () => {
    const before = fingerprint(join(data, "files"));
    const r = await runCli(["restore", backupFile, "--dir", data]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("is in use by a running burrow serve; stop it first");
    expect(r.stderr.trim().split("\n").at(-1)).toStartWith("burrow: cannot restore");
    expect(fingerprint(join(data, "files"))).toEqual(before);
    expect(readdirSync(dir).filter((n) => n.includes(".restore-"))).toEqual([]);
  });

  test("restore into a new directory; a server there has the data", async () => {
    const target = join(dir, "restored");
    const r = await runCli(["restore", backupFile, "--dir", target]);
    expect([r.code, r.stderr]).toEqual([0, expect.stringMatching(/^restore: 3 databases and 1 files checked and restored in/)]);
    expect(r.stdout).toContain(`into ${target}`);
    expect(readdirSync(dir).filter((n) => n.startsWith("."))).toEqual([]);
    const s2 = await startServerProcess(SOURCE, env(target));
    try {
      const notes = (await (await api(s2.url, "GET", "/note?note_id[in]=n0,n19")).json()) as { text: string }[];
      expect(notes.map((n: { text: string }) => n.text).sort()).toEqual(["note 0", "note 19"]);
      const doc = (await (await api(s2.url, "GET", "/doc/d1")).json()) as { file: string };
      const file = await fetch(`${s2.url}${new URL(doc.file).pathname}`);
      expect(await file.text()).toBe("hello from the backup");
    } finally {
      await s2.stop();
    }
  }, 60_000);

  test("a damaged backup (one byte flipped) is refused and the target is left as it was", async () => {
    const target = join(dir, "restored");
    const bad = join(dir, "damaged.tar");
    copyFileSync(backupFile, bad);
    const bytes = readFileSync(bad);
    // A byte inside development.db's data (the second member): past system.db's header and data.
    const at = Math.floor(statSync(bad).size / 3);
    bytes[at] = bytes[at]! ^ 0xff;
    writeFileSync(bad, bytes);
    const before = fingerprint(target);
    const r = await runCli(["restore", bad, "--dir", target]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /burrow: cannot restore .*damaged\.tar: (member \S+ does not match its SHA-256 checksum \(damaged\)|it is not a whole tar file)/,
    );
    expect(r.stderr).toContain("restore refused; nothing was changed");
    expect(fingerprint(target)).toEqual(before);
    expect(readdirSync(dir).filter((n) => n.startsWith("."))).toEqual([]);
  }, 60_000);

  test("restore over a stopped server's directory keeps its backups; --out writes elsewhere", async () => {
    const target = join(dir, "restored");
    const out = join(dir, "copy.tar");
    const b = await runCli(["backup", "--dir", target, "--out", out]);
    expect(b.code).toBe(0);
    expect(b.stdout.trim()).toBe(out);
    expect(b.stderr).toMatch(/writes held for \d+ ms/);
    const kept = join(target, "backups", "burrow-20000101T000000Z-abcd.tar");
    copyFileSync(out, kept);
    const r = await runCli(["restore", out, "--dir", target]);
    expect(r.code).toBe(0);
    expect(existsSync(kept)).toBe(true);
    expect(existsSync(join(target, "system.db"))).toBe(true);
    expect((await runCli(["backup", "--dir", target, "--out", out])).stderr).toContain("exists; choose a new file");
    expect((await runCli(["restore", join(dir, "missing.tar"), "--dir", target])).stderr).toContain("cannot read");
    expect((await runCli(["restore", "--help"])).stdout).toContain("burrow restore <file>");
    expect((await runCli(["backup", "--help"])).stdout).toContain("burrow backup [--out file]");
  }, 60_000);
});
