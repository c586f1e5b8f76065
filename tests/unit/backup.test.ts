// Backups' pure parts: the tar writer and reader (pax names, checksums, damage found), the manifest check, backup
// ids and member names, the schedule's due time, the progress line, and server-wide settings.

import { afterAll, describe, expect, test } from "bun:test";
import { closeSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { TarError, TarWriter, paxRecord, readTar } from "../../src/backup/tar.ts";
import {
  BACKUP_ID,
  FORMAT,
  FORMAT_VERSION,
  checkMembers,
  isMemberName,
  newBackupId,
  parseManifest,
  type Manifest,
} from "../../src/backup/manifest.ts";
import { nextBackupAt } from "../../src/backup/schedule.ts";
import { formatBytes, progressBar, progressLine } from "../../src/cli/progress.ts";
import { otherEnvSettings, resolveSettings } from "../../src/system/settings.ts";
import { tempDir } from "../helpers/app.ts";

const dir = tempDir("burrow-backup-unit-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

function writeTar(path: string, members: [string, Uint8Array][]): { name: string; size: number; sha256: string }[] {
  const fd = openSync(path, "w");
  try {
    const w = new TarWriter(fd);
    const out = members.map(([name, bytes]) => ({ name, size: bytes.length, sha256: w.addBytes(name, bytes, 1_700_000_000_000) }));
    w.finish();
    return out;
  } finally {
    closeSync(fd);
  }
}

function readAll(path: string): { members: { name: string; size: number; sha256: string }[]; bodies: Map<string, Buffer> } {
  const bodies = new Map<string, Buffer>();
  const members = readTar(path, (m) => {
    const parts: Buffer[] = [];
    return { write: (c) => void parts.push(Buffer.from(c)), close: () => void bodies.set(m.name, Buffer.concat(parts)) };
  });
  return { members, bodies };
}

describe("tar", () => {
  const long = `files/development/${"a".repeat(32)}/résumé ${"x".repeat(150)}.pdf`;
  const members: [string, Uint8Array][] = [
    ["system.db", Uint8Array.from({ length: 5000 }, (_, i) => i & 255)],
    ["empty", new Uint8Array(0)],
    ["exact", new Uint8Array(512).fill(7)],
    [long, new TextEncoder().encode("long unicode name")],
  ];

  test("writes what it reads back, names and bytes, with SHA-256 of each member", () => {
    const path = join(dir, "a.tar");
    const written = writeTar(path, members);
    const { members: read, bodies } = readAll(path);
    expect(read).toEqual(written);
    for (const [name, bytes] of members) {
      expect(bodies.get(name)).toEqual(Buffer.from(bytes));
      expect(read.find((m) => m.name === name)!.sha256).toBe(sha(bytes));
    }
    expect(readFileSync(path).length % 512).toBe(0);
  });

  test("the system tar lists the same names (pax headers for long and non-ASCII names)", () => {
    const path = join(dir, "a.tar");
    writeTar(path, members);
    const p = Bun.spawnSync(["tar", "-tf", path], { env: { LC_ALL: "C.UTF-8" } });
    if (p.exitCode !== 0 && /not found/.test(p.stderr.toString())) return; // no tar on this machine
    expect(p.stdout.toString().trim().split("\n")).toEqual(members.map(([n]) => n));
  });

  test("a pax record counts its own length", () => {
    expect(paxRecord("path", "a")).toBe("9 path=a\n");
    const r = paxRecord("path", "x".repeat(90));
    expect(Number(r.split(" ")[0])).toBe(Buffer.byteLength(r));
    const r2 = paxRecord("path", "é".repeat(60));
    expect(Number(r2.split(" ")[0])).toBe(Buffer.byteLength(r2));
  });

  test("a damaged header, a truncated archive and a non-file member are TarErrors", () => {
    const path = join(dir, "b.tar");
    writeTar(path, members);
    const good = readFileSync(path);
    const bad = Buffer.from(good);
    bad[10] = bad[10]! ^ 1; // in the first header's name
    writeFileSync(path, bad);
    expect(() => readAll(path)).toThrow(TarError);
    writeFileSync(path, good.subarray(0, 3000));
    expect(() => readAll(path)).toThrow(/truncated/);
    const link = Buffer.from(good.subarray(0, 512));
    link[156] = "2".charCodeAt(0);
    let sum = 0;
    for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 32 : link[i]!;
    link.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, "ascii");
    writeFileSync(path, Buffer.concat([link, Buffer.alloc(1024)]));
    expect(() => readAll(path)).toThrow(/not a regular file/);
  });

  test("a flipped data byte reads fine but changes the member's SHA-256", () => {
    const path = join(dir, "c.tar");
    const written = writeTar(path, members);
    const bytes = readFileSync(path);
    bytes[512 + 100] = bytes[512 + 100]! ^ 0xff; // system.db's data
    writeFileSync(path, bytes);
    const read = readAll(path).members;
    expect(read[0]!.sha256).not.toBe(written[0]!.sha256);
    expect(read.slice(1)).toEqual(written.slice(1));
  });
});

describe("manifest", () => {
  const m = (name: string, body = name) => ({ name, size: body.length, sha256: sha(new TextEncoder().encode(body)) });
  const manifest: Manifest = {
    format: FORMAT,
    formatVersion: FORMAT_VERSION,
    id: "burrow-20261123T211203Z-ab12",
    created: 1,
    burrowVersion: "0",
    members: [m("system.db"), m("development.db"), m("production.db"), m("files/development/abc/a.txt")],
  };

  test("a whole archive has no problems; each kind of damage is named", () => {
    expect(checkMembers(manifest, manifest.members)).toEqual([]);
    expect(checkMembers(manifest, [...manifest.members, m("manifest.json")])).toEqual([]);
    expect(checkMembers(manifest, manifest.members.slice(1))).toEqual(["member system.db is missing"]);
    expect(checkMembers(manifest, [m("system.db", "other"), ...manifest.members.slice(1)])).toEqual([
      "member system.db has 5 bytes, the manifest says 9",
    ]);
    expect(checkMembers(manifest, [{ ...m("system.db"), sha256: "0".repeat(64) }, ...manifest.members.slice(1)])).toEqual([
      "member system.db does not match its SHA-256 checksum (damaged)",
    ]);
    expect(checkMembers(manifest, [...manifest.members, m("files/x")])).toEqual(["member files/x is not in the manifest"]);
    expect(checkMembers(manifest, [...manifest.members, m("../etc/passwd")])).toEqual([
      'member "../etc/passwd" is not allowed in a backup',
      "member ../etc/passwd is not in the manifest",
    ]);
    expect(checkMembers({ ...manifest, members: manifest.members.slice(1) }, manifest.members.slice(1))).toEqual([
      "the manifest lists no system.db",
    ]);
  });

  test("parseManifest refuses what is not a Burrow backup's", () => {
    expect(parseManifest(JSON.stringify(manifest))).toEqual(manifest);
    expect(() => parseManifest("{")).toThrow("not JSON");
    expect(() => parseManifest(JSON.stringify({ ...manifest, format: "x" }))).toThrow("not a Burrow backup");
    expect(() => parseManifest(JSON.stringify({ ...manifest, formatVersion: 2 }))).toThrow("format version 2");
    expect(() => parseManifest(JSON.stringify({ ...manifest, members: [{ name: "a" }] }))).toThrow("without a name, size or SHA-256");
  });

  test("member names: the databases and files/ keys only", () => {
    for (const ok of [
      "system.db",
      "development.db",
      "production.db",
      "production.db-wal",
      "manifest.json",
      "files/development/0123/résumé 2026.pdf",
    ])
      expect([ok, isMemberName(ok)]).toEqual([ok, true]);
    for (const bad of [
      "burrow.lock",
      "burrow.lock-wal",
      "system.db-shm",
      "files/",
      "files/../x",
      "files/a//b",
      "/etc/passwd",
      "files/a/./b",
      "files/a/.~tmp.tmp",
      "files/a\\b",
      "other/x",
    ])
      expect([bad, isMemberName(bad)]).toEqual([bad, false]);
  });

  test("backup ids carry the UTC time and four hex digits", () => {
    const id = newBackupId(Date.UTC(2026, 10, 23, 21, 12, 3), Uint8Array.from([0xab, 0x12]));
    expect(id).toBe("burrow-20261123T211203Z-ab12");
    expect(BACKUP_ID.test(id)).toBe(true);
    expect(BACKUP_ID.test(newBackupId(Date.now()))).toBe(true);
    expect(BACKUP_ID.test("burrow-20261123T211203Z-ab12/../x")).toBe(false);
  });
});

describe("schedule, progress, settings", () => {
  test("nextBackupAt: off at 0, now when there is no backup, else `every` hours after the newest", () => {
    expect(nextBackupAt({ every: 0 }, 1000, 5000)).toBeNull();
    expect(nextBackupAt({ every: 2 }, null, 5000)).toBe(5000);
    expect(nextBackupAt({ every: 2 }, 1000, 5000)).toBe(1000 + 2 * 3600_000);
  });

  test("progressLine and formatBytes", () => {
    expect(progressLine(0, 100, "copying", 10)).toBe("[>         ]   0%  0 B / 100 B  copying");
    expect(progressLine(50, 100, "x", 10)).toBe("[=====>    ]  50%  50 B / 100 B  x");
    expect(progressLine(100, 100, "done", 10)).toBe("[==========] 100%  100 B / 100 B  done");
    expect(progressLine(5, 0, "?", 4)).toBe("[>   ]   0%  5 B / 0 B  ?");
    expect(formatBytes(1536)).toBe("1.5 KB");
    expect(formatBytes(1024 ** 3)).toBe("1.0 GB");
    expect(formatBytes(250 * 1024 ** 2)).toBe("250 MB");
  });

  test("the bar draws on a terminal only; elsewhere one final line", () => {
    const written: string[] = [];
    let t = 0;
    const pipe = progressBar({ isTTY: false, write: (s: string) => written.push(s) }, () => (t += 200));
    pipe.update(1, 2, "a");
    pipe.finish("done");
    expect(written).toEqual(["done\n"]);
    written.length = 0;
    const tty = progressBar({ isTTY: true, write: (s: string) => written.push(s) }, () => (t += 200));
    tty.update(1, 2, "a");
    tty.update(2, 2, "b");
    tty.finish("done");
    expect(written).toHaveLength(3);
    expect(written[0]).toStartWith("\r[");
    expect(written[2]).toBe("\r\x1b[Kdone\n");
  });

  test("backups settings are server-wide: production's document only", () => {
    expect(otherEnvSettings("development", { backups: { every: 1 }, app: { name: "x" } })).toEqual([
      { path: "backups.every", only: "production" },
    ]);
    expect(otherEnvSettings("production", { backups: { every: 1, keep: 2, s3: true } })).toEqual([]);
    expect(resolveSettings("production", {}).backups).toEqual({ every: 0, keep: 7, s3: false });
  });
});
