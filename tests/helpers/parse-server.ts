// Starts a real Parse Server (9.10.0, pinned; scripts/install-parse-server.mjs puts it in .cache/parse-server) on a
// real, throwaway PostgreSQL cluster (Debian's server, scripts/install-postgres.mjs), both on free loopback ports,
// for the Parse import tests: seed it through Parse's REST API, then have Burrow import from it. Everything lives
// in one temp directory (cluster, unix socket, stored files, logs) that stop() removes. initdb and postgres refuse
// to run as root, so as root they run as the `postgres` OS user (setpriv) and the directory belongs to that user.
import { chownSync, closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./loopback-process.ts";

const ROOT = join(import.meta.dir, "..", "..");
const MODULES = join(ROOT, ".cache", "parse-server", "node_modules");
const START_TIMEOUT_MS = 60_000;
const INSTALL_TIMEOUT_MS = 300_000;
const APP_ID = "burrow-import-test";
const MASTER_KEY = "burrow-import-test-master-key";
const DB_NAME = "parse";
const DB_PASSWORD = "parse-test-password";

export interface ParseRestOptions {
  /** Send the master key (X-Parse-Master-Key). */
  master?: boolean;
  sessionToken?: string;
  /** Content type of a raw body (a string or bytes, e.g. a file upload); object bodies are sent as JSON. */
  contentType?: string;
  /** Extra request headers. */
  headers?: Record<string, string>;
}

export interface ParseRestResponse {
  status: number;
  /** The parsed JSON body, or the text when the answer is not JSON. */
  body: any;
  headers: Headers;
}

export interface ParseServer {
  /** The API root, e.g. http://127.0.0.1:40123/parse (also its serverURL and publicServerURL). */
  url: string;
  appId: string;
  masterKey: string;
  /** postgres://postgres:…@127.0.0.1:<port>/parse, the database Parse Server uses. */
  databaseURI: string;
  /** The temp directory (pgdata/, parse/files/, postgres.log, parse-server.log). */
  dir: string;
  /** A REST call relative to `url` ("/classes/GameScore"), with the app id and the chosen credentials. */
  rest(method: string, path: string, body?: unknown, opts?: ParseRestOptions): Promise<ParseRestResponse>;
  /** Stops Parse Server and PostgreSQL and removes the temp directory; safe to call twice. */
  stop(): Promise<void>;
  /** Kills both processes at once (for process exit hooks, which cannot wait); leaves the directory. */
  kill(): void;
}

export interface StartParseServerOptions {
  /** Extra or overriding ParseServer options (JSON-serialisable), merged over the harness defaults. */
  options?: Record<string, unknown>;
}

export async function startParseServer(opts: StartParseServerOptions = {}): Promise<ParseServer> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  const [pgBin, entry] = await Promise.all([install("install-postgres.mjs"), install("install-parse-server.mjs")]);

  const asRoot = process.getuid?.() === 0;
  const pgUser = asRoot ? postgresUser() : null;
  // As root, initdb/postgres run as the postgres user; setpriv execs, so the child we hold is postgres itself.
  const asPg = (argv: string[]) =>
    pgUser ? ["setpriv", `--reuid=${pgUser.uid}`, `--regid=${pgUser.gid}`, "--init-groups", "--", ...argv] : argv;

  const dir = mkdtempSync(join(tmpdir(), "burrow-parse-server-"));
  const pgData = join(dir, "pgdata");
  const pgSock = join(dir, "pgsock");
  const parseDir = join(dir, "parse");
  const pwFile = join(dir, "pwfile");
  mkdirSync(pgSock);
  mkdirSync(parseDir);
  writeFileSync(pwFile, `${DB_PASSWORD}\n`, { mode: 0o600 });
  if (pgUser) for (const p of [dir, pgSock, pwFile]) chownSync(p, pgUser.uid, pgUser.gid);

  let postgres: Bun.Subprocess | null = null;
  let parse: Bun.Subprocess | null = null;
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    // Parse Server first (its launcher closes the connection pool and exits on SIGTERM), then a fast shutdown of
    // PostgreSQL (SIGINT; SIGTERM would wait for clients), escalating to an immediate one (SIGQUIT), then SIGKILL.
    if (parse) await terminate(parse, ["SIGTERM", "SIGKILL"], 10_000);
    if (postgres) await terminate(postgres, ["SIGINT", "SIGQUIT", "SIGKILL"], 10_000);
    rmSync(dir, { recursive: true, force: true });
  };
  const kill = () => {
    parse?.kill("SIGKILL");
    postgres?.kill("SIGQUIT");
  };
  const fail = async (why: string): Promise<never> => {
    const logs = ["postgres.log", "parse-server.log"].map((f) => `--- ${f}\n${readLog(join(dir, f))}`).join("\n");
    await stop();
    throw new HarnessError(`Parse Server harness: ${why}\n${logs}`);
  };

  try {
    // The cluster: no fsync anywhere (a throwaway), password logins over TCP, trust on the private unix socket.
    const initdb = await run(
      asPg([
        join(pgBin, "initdb"),
        "-D",
        pgData,
        "-U",
        "postgres",
        `--pwfile=${pwFile}`,
        "--auth-local=trust",
        "--auth-host=scram-sha-256",
        "-E",
        "UTF8",
        "--locale=C",
        "--no-sync",
      ]),
      { cwd: dir, timeoutMs: deadline - Date.now() },
    );
    if (initdb.code !== 0) return await fail(`initdb exited with ${initdb.code}:\n${initdb.output}`);

    const pgPort = freePort();
    const pgLog = openSync(join(dir, "postgres.log"), "w");
    postgres = Bun.spawn(
      asPg([
        join(pgBin, "postgres"),
        "-D",
        pgData,
        "-p",
        String(pgPort),
        "-c",
        "listen_addresses=127.0.0.1",
        "-c",
        `unix_socket_directories=${pgSock}`,
        "-c",
        "fsync=off",
        "-c",
        "synchronous_commit=off",
        "-c",
        "full_page_writes=off",
        "-c",
        "max_connections=40",
        "-c",
        "shared_buffers=32MB",
      ]),
      { cwd: dir, stdin: "ignore", stdout: pgLog, stderr: pgLog },
    );
    closeSync(pgLog);
    while (true) {
      if (postgres.exitCode !== null) return await fail(`postgres exited with ${postgres.exitCode} before it was ready`);
      const ready = await run([join(pgBin, "pg_isready"), "-q", "-h", "127.0.0.1", "-p", String(pgPort), "-t", "1"], {
        cwd: dir,
        timeoutMs: 5000,
      });
      if (ready.code === 0) break;
      if (Date.now() > deadline) return await fail(`postgres did not accept connections on port ${pgPort} in time`);
      await Bun.sleep(100);
    }
    const createdb = await run([join(pgBin, "createdb"), "-h", pgSock, "-p", String(pgPort), "-U", "postgres", DB_NAME], {
      cwd: dir,
      timeoutMs: Math.max(deadline - Date.now(), 5000),
    });
    if (createdb.code !== 0) return await fail(`createdb exited with ${createdb.code}:\n${createdb.output}`);
    const databaseURI = `postgres://postgres:${DB_PASSWORD}@127.0.0.1:${pgPort}/${DB_NAME}`;

    // Parse Server under Node, through a small launcher: ParseServer + express, files on disk (the default files
    // adapter is GridFS, which needs MongoDB), stored under parse/files/ (the adapter is relative to the cwd).
    const port = freePort();
    const url = `http://127.0.0.1:${port}/parse`;
    const launcher = join(parseDir, "launcher.cjs");
    writeFileSync(launcher, LAUNCHER);
    const options = {
      appId: APP_ID,
      masterKey: MASTER_KEY,
      databaseURI,
      serverURL: url,
      publicServerURL: url,
      // Old Parse apps (the ones people migrate from) commonly let clients create classes and upload files.
      allowClientClassCreation: true,
      fileUpload: { enableForPublic: true, enableForAnonymousUser: true, enableForAuthenticatedUser: true },
      logsFolder: join(parseDir, "logs"),
      ...opts.options,
    };
    const parseLog = openSync(join(dir, "parse-server.log"), "w");
    // Parse-specific settings from the caller's environment must not leak into this server.
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("PARSE_")));
    parse = Bun.spawn(["node", launcher], {
      cwd: parseDir,
      env: {
        ...env,
        PARSE_HARNESS_ENTRY: entry,
        PARSE_HARNESS_MODULES: MODULES,
        PARSE_HARNESS_PORT: String(port),
        PARSE_HARNESS_OPTIONS: JSON.stringify(options),
      },
      stdin: "ignore",
      stdout: parseLog,
      stderr: parseLog,
    });
    closeSync(parseLog);
    while (true) {
      if (parse.exitCode !== null) return await fail(`Parse Server exited with ${parse.exitCode} before it was ready`);
      const health = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) })
        .then((r) => (r.ok ? (r.json() as Promise<{ status?: string }>) : null))
        .catch(() => null);
      if (health?.status === "ok") break;
      if (Date.now() > deadline) return await fail(`Parse Server did not answer ${url}/health within ${START_TIMEOUT_MS / 1000} s`);
      await Bun.sleep(100);
    }

    const rest = async (method: string, path: string, body?: unknown, o: ParseRestOptions = {}): Promise<ParseRestResponse> => {
      const headers: Record<string, string> = { "X-Parse-Application-Id": APP_ID, ...o.headers };
      if (o.master) headers["X-Parse-Master-Key"] = MASTER_KEY;
      if (o.sessionToken) headers["X-Parse-Session-Token"] = o.sessionToken;
      let payload: RequestInit["body"];
      if (typeof body === "string" || body instanceof Uint8Array || body instanceof ArrayBuffer || body instanceof Blob) {
        headers["Content-Type"] = o.contentType ?? "application/octet-stream";
        payload = body as RequestInit["body"];
      } else if (body !== undefined) {
        headers["Content-Type"] = o.contentType ?? "application/json";
        payload = JSON.stringify(body);
      }
      const res = await fetch(`${url}${path.startsWith("/") ? path : `/${path}`}`, {
        method,
        headers,
        body: payload,
        signal: AbortSignal.timeout(30_000),
      });
      const text = await res.text();
      let parsed: unknown = text;
      if ((res.headers.get("content-type") ?? "").includes("json")) {
        try {
          parsed = JSON.parse(text);
        } catch {}
      }
      return { status: res.status, body: parsed, headers: res.headers };
    };

    return { url, appId: APP_ID, masterKey: MASTER_KEY, databaseURI, dir, rest, stop, kill };
  } catch (e) {
    if (e instanceof HarnessError) throw e;
    return await fail(String(e instanceof Error ? (e.stack ?? e.message) : e));
  }
}

// Runs in Node in the temp directory: the modules come from .cache/parse-server by absolute path.
const LAUNCHER = `"use strict";
const path = require("node:path");
const ParseServer = require(process.env.PARSE_HARNESS_ENTRY).default;
const express = require(path.join(process.env.PARSE_HARNESS_MODULES, "express"));
const FSFilesAdapter = require(path.join(process.env.PARSE_HARNESS_MODULES, "@parse", "fs-files-adapter"));
const port = Number(process.env.PARSE_HARNESS_PORT);
const options = JSON.parse(process.env.PARSE_HARNESS_OPTIONS);

async function main() {
  const server = new ParseServer({ ...options, filesAdapter: new FSFilesAdapter() });
  await server.start();
  const app = express();
  app.use("/parse", server.app);
  // handleShutdown() closes server.server too (startApp() would set it, and also install its own signal handlers).
  server.server = await new Promise((resolve, reject) => {
    const http = app.listen(port, "127.0.0.1", (err) => (err ? reject(err) : resolve(http)));
  });
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => process.exit(0), 5000).unref();
    server.handleShutdown().finally(() => process.exit(0));
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  console.log("parse-server harness listening on " + options.serverURL);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
`;

class HarnessError extends Error {}

const installs = new Map<string, Promise<string>>();

/**
 * Runs scripts/<script> (idempotent; installs only what is missing) and answers the last line it prints; once per
 * test process, so servers started side by side do not run two npm installs into the same directory.
 */
function install(script: string): Promise<string> {
  let p = installs.get(script);
  if (!p) {
    p = runInstall(script);
    installs.set(script, p);
    p.catch(() => installs.delete(script));
  }
  return p;
}

async function runInstall(script: string): Promise<string> {
  const res = await run(["node", join(ROOT, "scripts", script)], { cwd: ROOT, timeoutMs: INSTALL_TIMEOUT_MS });
  const last = res.stdout.trim().split("\n").at(-1)?.trim() ?? "";
  if (res.code !== 0 || !last.startsWith("/")) throw new Error(`scripts/${script} exited with ${res.code}:\n${res.output}`);
  return last;
}

/** Runs a command to its end (killed after timeoutMs), answering its exit code, its stdout, and stdout+stderr. */
async function run(argv: string[], o: { cwd: string; timeoutMs: number }): Promise<{ code: number; stdout: string; output: string }> {
  const proc = Bun.spawn(argv, { cwd: o.cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill("SIGKILL"), Math.max(o.timeoutMs, 1000));
  try {
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    return { code, stdout: out, output: `${out}${err ? `\n${err}` : ""}` };
  } finally {
    clearTimeout(timer);
  }
}

/** Sends each signal in turn, waiting up to waitMs after each for the process to exit. */
async function terminate(proc: Bun.Subprocess, signals: NodeJS.Signals[], waitMs: number): Promise<void> {
  for (const signal of signals) {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    proc.kill(signal);
    let timer: Timer | undefined;
    const exited = await Promise.race([
      proc.exited.then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), waitMs);
      }),
    ]);
    clearTimeout(timer);
    if (exited) return;
  }
}

function postgresUser(): { uid: number; gid: number } {
  const line = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((l) => l.startsWith("postgres:"));
  const [, , uid, gid] = line?.split(":") ?? [];
  if (!uid || !gid) throw new Error("running as root, but there is no `postgres` OS user to run PostgreSQL as");
  return { uid: Number(uid), gid: Number(gid) };
}

function readLog(path: string): string {
  try {
    return readFileSync(path, "utf8").slice(-4000);
  } catch {
    return "(no log)";
  }
}
