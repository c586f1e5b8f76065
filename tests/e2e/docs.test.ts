// The API reference at /_admin/docs/ in real Chromium against `burrow serve` run from source, with every request
// off loopback made to fail: it renders the server's own OpenAPI description (operation names from it), fetched
// from /_admin/api/openapi.json, with no console error, no CSP violation and no request elsewhere; markup-like text
// in the description does not break it; and a script uploaded under /_files/ cannot be run in the page.
// Screenshots (light and dark) go to test-results/docs/.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { type Browser, type BrowserContext, type Page, chromium } from "playwright-core";
import { formatUpload } from "../../src/files/upload.ts";
import { tempDir } from "../helpers/app.ts";
import { ROOT, type ServerProcess, startServerProcess } from "../helpers/spawn.ts";
import { CHROMIUM_ARGS, chromiumPath } from "../helpers/chromium.ts";

type Spec = { info: { title: string; description: string }; paths: Record<string, Record<string, { summary?: string }>> };
/** What the page's init script records (the tests compile without the DOM library). */
type Win = { __violations?: string[]; __markupRan?: boolean; __uploadRan?: boolean };

const dir = tempDir("burrow-docs-e2e-");
const shots = join(ROOT, "test-results", "docs");
const ADMIN = { email: "docs@example.com", password: "docs password 1" };
const DEV_KEY = "docs-e2e-dev-public";

let server: ServerProcess;
let browser: Browser;
let spec: Spec;

beforeAll(async () => {
  server = await startServerProcess([process.execPath, join(ROOT, "src/main.ts")], {
    BURROW_DIR: join(dir, "data"),
    BURROW_DEV_PUBLIC_KEY: DEV_KEY,
    BURROW_ADMIN_EMAIL: ADMIN.email,
    BURROW_ADMIN_PASSWORD: ADMIN.password,
    BURROW_LOG_LEVEL: "warn",
  });
  spec = (await (await fetch(`${server.url}/_admin/api/openapi.json`)).json()) as Spec;
  rmSync(shots, { recursive: true, force: true });
  mkdirSync(shots, { recursive: true });
  browser = await chromium.launch({
    executablePath: chromiumPath(),
    // Names other than loopback do not resolve, whatever the page asks for.
    args: [...CHROMIUM_ARGS, "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  if (server) expect(await server.stop()).toBe(0);
  rmSync(dir, { recursive: true, force: true });
});

interface Watched {
  context: BrowserContext;
  page: Page;
  /** Console errors and warnings, uncaught page errors. */
  problems: string[];
  /** Requests to anything but this server (each made to fail). */
  foreign: string[];
  /** Every URL the page requested. */
  requested: string[];
  violations(): Promise<string[]>;
}

/** A fresh page whose every request off loopback fails and is recorded, as are console errors and CSP violations. */
async function watchedPage(): Promise<Watched> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const foreign: string[] = [];
  const requested: string[] = [];
  await context.route("**/*", (route) => {
    const url = route.request().url();
    requested.push(url);
    if (new URL(url).hostname === "127.0.0.1") return route.continue();
    foreign.push(url);
    return route.abort("addressunreachable");
  });
  // Init scripts come through the DevTools protocol, not the page's markup: the page's CSP does not apply to them.
  await context.addInitScript(() => {
    const w = globalThis as unknown as Win & {
      document: { addEventListener(type: string, f: (e: { violatedDirective: string; blockedURI: string }) => void): void };
    };
    w.__violations = [];
    w.document.addEventListener("securitypolicyviolation", (e) => w.__violations!.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error" || m.type() === "warning") problems.push(`${m.type()}: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  page.setDefaultTimeout(15_000);
  return {
    context,
    page,
    problems,
    foreign,
    requested,
    violations: () => page.evaluate(() => (globalThis as unknown as Win).__violations ?? []),
  };
}

describe("the API reference", () => {
  test("renders the server's description offline: operation names, no error, no CSP violation, nothing off loopback", async () => {
    const w = await watchedPage();
    try {
      await w.page.goto(`${server.url}/_admin/docs`);
      expect(new URL(w.page.url()).pathname).toBe("/_admin/docs/");
      const summaries = [
        spec.paths["/{schema}"]!.get!.summary!,
        spec.paths["/{schema}/{id}"]!.put!.summary!,
        spec.paths["/_admin/api/keys"]!.get!.summary!,
      ];
      expect(summaries[0]).toBe("Query objects of a schema");
      for (const s of summaries) await w.page.getByText(s, { exact: true }).first().waitFor();
      await w.page.getByText(spec.info.title).first().waitFor();
      // Opening an operation shows its description from the spec.
      await w.page.getByText(summaries[0]!, { exact: true }).first().click();
      await w.page.getByText("Conditions are query parameters", { exact: false }).first().waitFor();
      await w.page.waitForLoadState("networkidle");
      for (const scheme of ["light", "dark"] as const) {
        await w.page.emulateMedia({ colorScheme: scheme });
        await w.page.waitForTimeout(200);
        await w.page.screenshot({ path: join(shots, `docs-${scheme}.png`) });
      }
      // The description came from the JSON route, not from the page's markup.
      expect(w.requested).toContain(`${server.url}/_admin/api/openapi.json`);
      expect(await (await fetch(`${server.url}/_admin/docs/`)).text()).not.toContain(summaries[0]!);
      expect(w.foreign).toEqual([]);
      expect(w.requested.every((u) => u.startsWith(`${server.url}/`))).toBe(true);
      expect(await w.violations()).toEqual([]);
      expect(w.problems).toEqual([]);
    } finally {
      await w.context.close();
    }
  }, 60_000);

  test("markup-like text in the description (<userSchema>, a closing script tag, an event handler) does not break it", async () => {
    const w = await watchedPage();
    try {
      const hostile = structuredClone(spec);
      const summary = "Query objects of <userSchema> </script><script>globalThis.__markupRan = true</script>";
      hostile.paths["/{schema}"]!.get!.summary = summary;
      hostile.info.description = `Calls go to /<userSchema>/accessToken. <img src="/nothing" onerror="globalThis.__markupRan = true">\n\n${hostile.info.description}`;
      await w.page.route(`${server.url}/_admin/api/openapi.json`, (route) => route.fulfill({ json: hostile }));
      await w.page.goto(`${server.url}/_admin/docs/`);
      // The summary is shown as the text it is.
      await w.page.getByText(summary, { exact: true }).first().waitFor();
      await w.page.getByText(spec.paths["/_admin/api/keys"]!.get!.summary!, { exact: true }).first().waitFor();
      await w.page.waitForLoadState("networkidle");
      expect(await w.page.evaluate(() => (globalThis as unknown as Win).__markupRan === true)).toBe(false);
      expect(w.foreign).toEqual([]);
      expect(await w.violations()).toEqual([]);
      expect(w.problems).toEqual([]);
    } finally {
      await w.context.close();
    }
  }, 60_000);

  test("a script uploaded under /_files/ is refused by the page's policy, though it is served as JavaScript", async () => {
    const login = (await (await fetch(`${server.url}/_admin/api/login`, { method: "POST", body: JSON.stringify(ADMIN) })).json()) as {
      token: string;
    };
    const schema = await fetch(`${server.url}/_admin/api/schemas/asset`, {
      method: "PUT",
      headers: { authorization: `Bearer ${login.token}` },
      body: JSON.stringify({ fields: { file: { type: "binary" } } }),
    });
    expect(schema.status).toBe(201);
    const js = new TextEncoder().encode("globalThis.__uploadRan = true;");
    const created = await fetch(`${server.url}/asset`, {
      method: "POST",
      headers: { accept: "application/vnd.service+json; version=0", "x-service-api-key": DEV_KEY, "content-type": "application/json" },
      body: JSON.stringify({ file: formatUpload("text/javascript", "run.js", js) }),
    });
    expect(created.status).toBe(201);
    const url = ((await created.json()) as { file: string }).file;
    expect(new URL(url).pathname).toStartWith("/_files/");
    const served = await fetch(url);
    expect(served.headers.get("content-type")).toBe("text/javascript");

    const w = await watchedPage();
    try {
      await w.page.goto(`${server.url}/_admin/docs/`);
      await w.page.getByText(spec.paths["/{schema}"]!.get!.summary!, { exact: true }).first().waitFor();
      const outcome = await w.page.evaluate(async (src) => {
        const d = (
          globalThis as unknown as {
            document: {
              createElement(t: string): { src: string; onload: () => void; onerror: () => void };
              head: { append(e: unknown): void };
            };
          }
        ).document;
        const s = d.createElement("script");
        s.src = src;
        const result = await new Promise<string>((resolve) => {
          s.onload = () => resolve("loaded");
          s.onerror = () => resolve("refused");
          d.head.append(s);
        });
        return { result, ran: (globalThis as unknown as Win).__uploadRan === true };
      }, url);
      expect(outcome).toEqual({ result: "refused", ran: false });
      expect(await w.violations()).toEqual([`script-src-elem ${url}`]);
    } finally {
      await w.context.close();
    }
  }, 60_000);
});
