// deploy/burrow.service: the unit file's syntax and the settings it must carry (a dedicated user, the state
// directory as BURROW_DIR, hardening, restart and stop behaviour), then `systemd-analyze verify` and the offline
// security score when systemd-analyze is installed (it is on Debian with systemd; otherwise says so and skips).

import { afterAll, expect, test } from "bun:test";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../helpers/app.ts";
import { ROOT } from "../helpers/spawn.ts";

const text = readFileSync(join(ROOT, "deploy/burrow.service"), "utf8");
const dir = tempDir("burrow-unit-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Section name -> key -> values (a key may repeat, as Environment= does). */
function parseUnit(src: string): Record<string, Record<string, string[]>> {
  const out: Record<string, Record<string, string[]>> = {};
  let section: string | null = null;
  src.split("\n").forEach((line, i) => {
    const t = line.trim();
    if (t === "" || t.startsWith("#") || t.startsWith(";")) return;
    const head = /^\[([A-Za-z]+)\]$/.exec(t);
    if (head) {
      section = head[1]!;
      out[section] = {};
      return;
    }
    const kv = /^([A-Za-z][A-Za-z0-9]*)=(.*)$/.exec(t);
    if (!kv || !section) throw new Error(`line ${i + 1} is neither a [Section] nor Key=Value: ${line}`);
    (out[section]![kv[1]!] ??= []).push(kv[2]!);
  });
  return out;
}

test("the unit file parses into [Unit], [Service] and [Install] with the settings Burrow needs", () => {
  const unit = parseUnit(text);
  expect(Object.keys(unit)).toEqual(["Unit", "Service", "Install"]);
  const s = unit.Service!;
  const one = (k: string) => s[k]?.at(-1);
  expect([one("User"), one("Group"), one("StateDirectory")]).toEqual(["burrow", "burrow", "burrow"]);
  expect(s.Environment).toContain("BURROW_DIR=/var/lib/burrow");
  expect(one("ExecStart")).toBe("/usr/local/bin/burrow serve");
  expect([one("KillSignal"), one("Restart"), one("RestartPreventExitStatus")]).toEqual(["SIGTERM", "on-failure", "2"]);
  expect(Number(one("LimitNOFILE"))).toBeGreaterThanOrEqual(65536);
  expect([one("NoNewPrivileges"), one("ProtectSystem"), one("ProtectHome"), one("PrivateTmp")]).toEqual(["yes", "strict", "yes", "yes"]);
  expect(one("ReadWritePaths")).toBe("/var/lib/burrow");
  expect(s.MemoryDenyWriteExecute).toBeUndefined(); // the JIT needs writable+executable memory
  expect(unit.Install!.WantedBy).toEqual(["multi-user.target"]);
});

test("a line that is not Key=Value is reported", () => {
  expect(() => parseUnit("[Service]\nUser burrow\n")).toThrow("line 2");
});

const analyze = Bun.which("systemd-analyze");
if (!analyze) console.log("systemd-analyze is not installed: the unit file is checked by the parser above only");
(analyze ? test : test.skip)("systemd-analyze verifies it, flags a broken copy, and rates its exposure below 4 (OK)", () => {
  // verify needs ExecStart to be an executable that exists: point it at this test runner.
  const copy = (src: string) => {
    const path = join(dir, "burrow.service");
    writeFileSync(path, src.replace("/usr/local/bin/burrow serve", `${process.execPath} serve`));
    return path;
  };
  const ok = Bun.spawnSync([analyze!, "verify", copy(text)], { stdout: "pipe", stderr: "pipe", cwd: dir });
  expect([ok.exitCode, ok.stderr.toString()]).toEqual([0, ""]);
  const broken = Bun.spawnSync([analyze!, "verify", copy(text.replace("ProtectSystem=strict", "ProtectSystem=stricter"))], {
    stdout: "pipe",
    stderr: "pipe",
    cwd: dir,
  });
  expect(broken.stderr.toString()).toContain("Failed to parse protect system value");
  const security = Bun.spawnSync([analyze!, "security", "--offline=yes", copy(text)], { stdout: "pipe", stderr: "pipe", cwd: dir });
  const score = Number(/Overall exposure level for burrow\.service: ([\d.]+)/.exec(security.stdout.toString())?.[1]);
  expect(score).toBeLessThan(4);
});
