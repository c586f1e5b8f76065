// The admin console in real Chromium (docs/api/admin.md#console-and-reference-pages), driven by playwright-core
// against the built binary: sign in, create a schema through the form (with its migration plan), add objects,
// filter, edit in place, see changes made elsewhere appear live (a refused value keeps what was typed), see a script uploaded under /_files/ refused by the
// page's policy, run a custom code job now and read its log, deploy, change a setting, add a viewer and check what a
// viewer cannot do, in the browser and at the API. Screenshots of every screen, light and dark, and a phone-width
// view go to test-results/console/.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { type Browser, type Page, chromium } from "playwright-core";
import { formatUpload } from "../../src/files/upload.ts";
import { tempDir } from "../helpers/app.ts";
import { buildBinary, ROOT, type ServerProcess, startServerProcess } from "../helpers/spawn.ts";
import { CHROMIUM_ARGS, chromiumPath } from "../helpers/chromium.ts";

/** The page's globals the checks below read (the tests compile without the DOM library). */
type Win = {
  document: { body: unknown; querySelector(selector: string): { naturalWidth?: number } | null };
  getComputedStyle(element: unknown): { backgroundColor: string };
};
/** What adding a script element to the page needs. */
type ScriptDoc = {
  addEventListener(type: "securitypolicyviolation", f: (e: { violatedDirective: string; blockedURI: string }) => void): void;
  createElement(tag: "script"): { src: string; onload: () => void; onerror: () => void };
  head: { append(element: unknown): void };
};

const dir = tempDir("burrow-console-e2e-");
const exe = join(dir, "burrow");
const shots = join(ROOT, "test-results", "console");
const OWNER = { email: "owner@example.com", password: "owner password 1" };
const VIEWER = { email: "viewer@example.com", password: "viewer password 1" };
/** A 1x1 PNG. */
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==", "base64");
const SCREENS = [
  "",
  "schemas/todo",
  "data/todo",
  "users/user",
  "roles",
  "deploy",
  "code",
  "hooks",
  "jobs",
  "push",
  "outbox",
  "backups",
  "keys",
  "settings",
  "admins",
];

let server: ServerProcess;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

beforeAll(async () => {
  buildBinary(exe);
  server = await startServerProcess([exe], {
    BURROW_DIR: join(dir, "data"),
    BURROW_ADMIN_EMAIL: OWNER.email,
    BURROW_ADMIN_PASSWORD: OWNER.password,
    BURROW_LOG_LEVEL: "warn",
  });
  rmSync(shots, { recursive: true, force: true });
  mkdirSync(shots, { recursive: true });
  browser = await chromium.launch({
    executablePath: chromiumPath(),
    args: CHROMIUM_ARGS,
  });
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.on("pageerror", (e) => pageErrors.push(e.message));
  page.setDefaultTimeout(10_000);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  if (server) expect(await server.stop()).toBe(0);
  rmSync(dir, { recursive: true, force: true });
  expect(pageErrors).toEqual([]);
});

/** Open a screen from a fresh page load (a hash-only navigation would keep the previous screen's state). */
async function go(hash: string) {
  await page.goto(`${server.url}/_admin/#/${hash}`);
  await page.reload();
  await page.waitForLoadState("networkidle");
}

async function signIn(who: { email: string; password: string }) {
  await page.goto(`${server.url}/_admin/`);
  await page.getByPlaceholder("Email").fill(who.email);
  await page.getByPlaceholder("Password").fill(who.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("navigation", { name: "Screens" }).waitFor();
}

async function signOut() {
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.getByRole("button", { name: "Sign in" }).waitFor();
}

/** An admin API call with the token the page holds (what the browser itself could send). */
function apiFromPage(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  return page.evaluate(
    async ([m, p, b]) => {
      const token = sessionStorage.getItem("burrow.console.token");
      const r = await fetch(`/_admin/api${p}`, {
        method: m,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: b === undefined ? undefined : JSON.stringify(b),
      });
      return { status: r.status, body: await r.json().catch(() => null) };
    },
    [method, path, body] as const,
  );
}

async function toast(text: string | RegExp) {
  const shown = page.getByRole("status").filter({ hasText: text });
  await shown.waitFor();
  expect(await shown.count()).toBeGreaterThan(0);
}

describe("an owner", () => {
  test("a wrong password shows the server's error; the right one signs in", async () => {
    await page.goto(`${server.url}/_admin/`);
    await page.getByPlaceholder("Email").fill(OWNER.email);
    await page.getByPlaceholder("Password").fill("wrong password");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page.getByRole("alert").textContent()).resolves.toContain("invalid email or password");
    await signIn(OWNER);
    expect(await page.getByRole("navigation", { name: "Screens" }).textContent()).toContain("Settings");
  }, 30_000);

  test("creates a schema through the form, seeing the migration plan first", async () => {
    await go("schemas/new");
    await page.getByLabel("Schema name").fill("todo");
    const fields: [string, string][] = [
      ["title", "string"],
      ["done", "boolean"],
      ["priority", "integer"],
      ["photo", "binary"],
    ];
    for (const [i, [name, type]] of fields.entries()) {
      await page.getByRole("button", { name: "+ Field" }).click();
      await page.getByLabel(`Field ${i + 1} name`, { exact: true }).fill(name);
      await page.getByLabel(`Field ${i + 1} type`, { exact: true }).selectOption(type);
    }
    await page.getByRole("button", { name: "+ Index" }).click();
    await page.getByLabel("Index 1", { exact: true }).fill("priority");
    await page.getByRole("button", { name: "Review and save" }).click();
    const plan = page.getByRole("dialog", { name: "Migration plan" });
    await plan.waitFor();
    expect(await plan.textContent()).toContain("todo");
    await plan.getByRole("button", { name: "Apply" }).click();
    await toast("Schema todo saved");
    const def = await apiFromPage("GET", "/schemas/todo");
    expect(def.body.fields).toEqual({
      title: { type: "string" },
      done: { type: "boolean" },
      priority: { type: "integer" },
      photo: { type: "binary" },
    });
    expect(def.body.indexes).toEqual([["priority"]]);
  }, 30_000);

  test("adds objects, filters them, edits a cell in place and keeps a refused value", async () => {
    await go("data/todo");
    for (const [title, priority] of [
      ["write tests", "1"],
      ["ship", "3"],
      ["celebrate", "2"],
    ]) {
      await page.getByRole("button", { name: "+ New object" }).click();
      const form = page.getByRole("dialog");
      await form.locator("input[name=title]").fill(title!);
      await form.locator("input[name=priority]").fill(priority!);
      await form.getByRole("button", { name: "Create" }).click();
      await form.waitFor({ state: "detached" });
    }
    await page.getByRole("button", { name: "+ Filter" }).click();
    await page.getByLabel("Filter field").selectOption("priority");
    await page.getByLabel("Filter operator").selectOption("gte");
    await page.getByLabel("Filter value").fill("2");
    await page.getByRole("button", { name: "Apply" }).click();
    const grid = page.getByRole("grid");
    await grid.locator("tbody tr", { hasText: "write tests" }).waitFor({ state: "detached" });
    await expect(grid.locator("tbody tr").count()).resolves.toBe(2);
    expect(await grid.textContent()).not.toContain("write tests");

    // Edit the title of the first row in place (column 1 is the first field).
    await grid.locator('td[data-cell="0-1"]').dblclick();
    await page.getByLabel("Cell value").fill("ship it");
    await page.getByLabel("Cell value").press("Enter");
    await grid.locator('td[data-cell="0-1"]', { hasText: "ship it" }).waitFor();
    // A value of the wrong type is refused with the reason, and what was typed stays in the editor.
    await grid.locator('td[data-cell="0-3"]').dblclick();
    await page.getByLabel("Cell value").fill("very high");
    await page.getByLabel("Cell value").press("Enter");
    await expect(page.getByRole("alert").textContent()).resolves.toContain("not an integer");
    expect(await page.getByLabel("Cell value").inputValue()).toBe("very high");
    await page.getByLabel("Cell value").press("Escape");
    // Keyboard: arrows move the focused cell.
    await grid.focus();
    await page.keyboard.press("ArrowDown");
    expect(await grid.locator("td.focus").getAttribute("data-cell")).toBe("1-3");
    const list = await apiFromPage("GET", "/data/development/todo?title=ship%20it");
    expect(list.body.length).toBe(1);
    // A file field: upload an image in place, then its thumbnail is shown from /_files.
    await page.keyboard.press("Escape");
    await grid.locator('td[data-cell="0-4"]').dblclick();
    await page.getByLabel("Upload a file").setInputFiles({ name: "dot.png", mimeType: "image/png", buffer: PNG });
    await toast("dot.png uploaded");
    const thumb = grid.locator('td[data-cell="0-4"] img.thumb');
    await thumb.waitFor();
    expect(await thumb.getAttribute("src")).toMatch(/\/_files\/development\/.+\/dot\.png$/);
    // The image itself loads (the file route serves it to the page).
    // Functions, not strings: Playwright polls a string predicate with `new Function` in the page, which the
    // console's Content-Security-Policy (a script nonce, no 'unsafe-eval') refuses and reports as a page error.
    await page.waitForFunction(
      () => (globalThis as unknown as Win).document.querySelector('td[data-cell="0-4"] img.thumb')?.naturalWidth === 1,
      undefined,
      { timeout: 5000 },
    );
  }, 60_000);

  test("the grid follows changes made elsewhere as they happen (an EventSource on a live stream)", async () => {
    await go("data/todo");
    await page.locator(".badge", { hasText: "live" }).waitFor({ timeout: 5000 });
    const grid = page.getByRole("grid");
    const made = await apiFromPage("POST", "/data/development/todo", { title: "made elsewhere", priority: 7 });
    expect(made.status).toBe(201);
    await grid.locator("tbody tr", { hasText: "made elsewhere" }).waitFor({ timeout: 3000 });
    const key = made.body.todo_id as string;
    expect((await apiFromPage("PUT", `/data/development/todo/${key}`, { title: "changed elsewhere" })).status).toBe(200);
    await grid.locator("tbody tr", { hasText: "changed elsewhere" }).waitFor({ timeout: 3000 });
    expect((await apiFromPage("DELETE", `/data/development/todo/${key}`)).status).toBe(200);
    await grid.locator("tbody tr", { hasText: "changed elsewhere" }).waitFor({ state: "detached", timeout: 3000 });
  }, 30_000);

  test("a script uploaded under /_files/ and added to the page is refused by its policy; the console's own runs on", async () => {
    expect((await apiFromPage("PUT", "/schemas/asset", { fields: { file: { type: "binary" } } })).status).toBe(201);
    const source = "globalThis.__uploadRan = true;";
    const created = await apiFromPage("POST", "/data/development/asset", {
      file: formatUpload("text/javascript", "run.js", new TextEncoder().encode(source)),
    });
    expect(created.status).toBe(201);
    const url: string = created.body.file;
    expect(new URL(url).origin).toBe(server.url);
    expect(new URL(url).pathname).toStartWith("/_files/");
    // Same origin, served as JavaScript: a policy that trusted 'self' would run it.
    const served = await page.evaluate(async (u) => {
      const r = await fetch(u);
      return [r.headers.get("content-type"), await r.text()];
    }, url);
    expect(served).toEqual(["text/javascript", source]);
    await go("data/todo");
    const outcome = await page.evaluate(async (src) => {
      const d = (globalThis as unknown as { document: ScriptDoc }).document;
      const violations: string[] = [];
      d.addEventListener("securitypolicyviolation", (e) => violations.push(`${e.violatedDirective} ${e.blockedURI}`));
      const script = d.createElement("script");
      script.src = src;
      const result = await new Promise<string>((resolve) => {
        script.onload = () => resolve("loaded");
        script.onerror = () => resolve("refused");
        d.head.append(script);
      });
      await new Promise((r) => setTimeout(r, 50));
      return { result, ran: (globalThis as unknown as { __uploadRan?: boolean }).__uploadRan === true, violations };
    }, url);
    expect(outcome).toEqual({ result: "refused", ran: false, violations: [`script-src-elem ${url}`] });
    // The console itself still works on that page.
    await page.getByRole("button", { name: "+ New object" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.waitFor();
    await dialog.getByRole("button", { name: "Close" }).click();
    await dialog.waitFor({ state: "detached" });
  }, 30_000);

  test("uploads custom code, sees its methods and tests a call", async () => {
    await go("code");
    await page
      .getByLabel("Custom code source")
      .fill('export const methods = [{ name: "greet", params: ["who"], execute(r) { return { body: { hello: r.params.who } }; } }];');
    await page.getByRole("button", { name: "Upload" }).click();
    await toast("Uploaded: greet");
    await page.getByLabel("Verb").selectOption("GET");
    await page.getByLabel("Method", { exact: true }).fill("greet");
    await page.getByLabel("Parameters").fill("who=console");
    await page.getByRole("button", { name: "Call" }).click();
    const result = page.getByTestId("call-result");
    await result.waitFor();
    expect(await result.textContent()).toContain('{"hello":"console"}');
    expect(await result.textContent()).toContain("200");
  }, 30_000);

  test("sees a job of the uploaded code with its next runs, runs it now and reads the lines it logged", async () => {
    await go("code");
    await page
      .getByLabel("Custom code source")
      .fill(
        'export const methods = [{ name: "greet", params: ["who"], execute(r) { return { body: { hello: r.params.who } }; } }];\n' +
          'export const jobs = [{ name: "yearly_report", schedule: "0 3 1 1 *", run(job, s) { s.log.info("report " + job.trigger); } }];',
      );
    await page.getByRole("button", { name: "Upload" }).click();
    await toast("Uploaded: greet");
    await go("jobs");
    const job = page.getByTestId("job-yearly_report");
    await job.waitFor();
    expect(await job.textContent()).toContain("0 3 1 1 *");
    expect(await job.textContent()).toContain("No runs yet.");
    expect(await page.getByTestId("next-yearly_report").textContent()).toMatch(/^Next: .+ · .+/);
    await job.getByRole("button", { name: "Run now" }).click();
    await toast("Started yearly_report");
    const runs = page.getByTestId("runs-yearly_report");
    await runs.locator("tbody tr").first().filter({ hasText: "ok" }).waitFor();
    expect(await runs.locator("tbody tr").first().textContent()).toContain("manual");
    await runs.getByRole("button", { name: "1 line" }).click();
    expect(await page.getByTestId("run-log").textContent()).toBe("info: report manual");
    await page.getByRole("dialog").getByRole("button", { name: "Close" }).click();
    expect((await apiFromPage("GET", "/jobs?env=development")).body.jobs[0].runs[0]).toMatchObject({ trigger: "manual", status: "ok" });
  }, 30_000);

  test("sees the hooks of the uploaded code and an after-hook that failed every try, and sends it back to the queue", async () => {
    expect((await apiFromPage("PUT", "/settings/development", { code: { hooks: { attempts: 1 } } })).status).toBe(200);
    await go("code");
    await page
      .getByLabel("Custom code source")
      .fill(
        'export const methods = [{ name: "greet", params: ["who"], execute(r) { return { body: { hello: r.params.who } }; } }];\n' +
          'export const hooks = { todo: { afterCreate(c) { throw new Error("the mail server is down"); } } };',
      );
    await page.getByRole("button", { name: "Upload" }).click();
    await toast("Uploaded: greet");
    const made = await apiFromPage("POST", "/data/development/todo", { title: "hooked" });
    expect(made.status).toBe(201);
    await go("hooks");
    expect(await page.getByTestId("hooks").textContent()).toContain("afterCreate");
    const dead = page.getByTestId("dead-hooks");
    for (let i = 0; i < 50 && !(await dead.isVisible()); i++) {
      await Bun.sleep(100);
      await page.getByRole("button", { name: "Refresh" }).click();
    }
    expect(await dead.textContent()).toContain("todo.afterCreate");
    expect(await dead.textContent()).toContain("the mail server is down");
    await dead.getByRole("button", { name: "Try again" }).first().click();
    await toast(/is queued again/);
    expect((await apiFromPage("PUT", "/settings/development", { code: { hooks: { attempts: null } } })).status).toBe(200);
    expect((await apiFromPage("DELETE", "/code")).status).toBe(200);
    expect((await apiFromPage("DELETE", `/data/development/todo/${made.body.todo_id}`)).status).toBeLessThan(300);
  }, 30_000);

  test("counts only when asked (a short page ends the list, so its total is known)", async () => {
    await go("data/todo");
    await page.getByTestId("page-info").filter({ hasText: "1–3 of 3" }).waitFor();
    for (let i = 0; i < 30; i++)
      expect((await apiFromPage("POST", "/data/development/todo", { title: `bulk ${i}`, priority: i })).status).toBe(201);
    await page.getByLabel("Page size").selectOption("25");
    await page.getByTestId("page-info").filter({ hasText: "1–25 of ?" }).waitFor();
    await page.getByRole("button", { name: "Count" }).click();
    await page.getByTestId("page-info").filter({ hasText: "1–25 of 33" }).waitFor();
    await page.getByRole("button", { name: "Next →" }).click();
    await page.getByTestId("page-info").filter({ hasText: "26–33 of 33" }).waitFor();
  }, 30_000);

  test("deploys development and sees who and when in the history", async () => {
    await go("deploy");
    expect(await page.getByTestId("deploy-diff").textContent()).toContain("+ schema todo");
    await page.getByRole("button", { name: "Review deploy" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByRole("button", { name: "Deploy" }).click();
    await toast("Deployed version 1");
    const history = page.getByTestId("deploy-history");
    await history.waitFor();
    expect(await history.textContent()).toContain(OWNER.email);
    expect(await history.textContent()).toContain("v1");
  }, 30_000);

  test("changes a setting", async () => {
    await go("settings");
    await page.getByLabel("rateLimits.ipPerMinute").fill("450");
    await page.getByRole("button", { name: /^Save/ }).click();
    await toast("Settings of development saved");
    expect((await apiFromPage("GET", "/settings/development")).body.rateLimits.ipPerMinute).toBe(450);
  }, 30_000);

  test("makes a backup and sees it listed", async () => {
    await go("backups");
    await page.getByRole("button", { name: "Back up now" }).click();
    await toast("Backup made");
    const table = page.getByTestId("backups");
    await table.waitFor();
    await expect(table.locator("tbody tr").count()).resolves.toBe(1);
    expect(await page.getByTestId("backup-schedule").textContent()).toContain("Schedule: off");
    expect((await apiFromPage("GET", "/backups")).body.backups.length).toBe(1);
  }, 60_000);

  test("adds a viewer", async () => {
    await go("admins");
    await page.getByLabel("New admin email").fill(VIEWER.email);
    await page.getByLabel("New admin password").fill(VIEWER.password);
    await page.getByLabel("New admin role").selectOption("viewer");
    await page.getByRole("button", { name: "Add admin" }).click();
    await toast(`${VIEWER.email} added as viewer`);
  }, 30_000);

  test("the Keys screen shows the lines that connect an app to each environment", async () => {
    await go("keys");
    const dev = await page.getByTestId("snippet-development").textContent();
    expect(dev).toContain(`import { connect } from "${server.url}/_sdk/burrow.js";`);
    expect(dev).toContain("version: 0");
    expect(await page.getByTestId("snippet-production").textContent()).toContain("/_sdk/types.d.ts?version=");
  }, 30_000);

  test("every screen renders in light and dark, and read-only at phone width", async () => {
    for (const theme of ["light", "dark"] as const) {
      await page.getByLabel("Theme").selectOption(theme);
      for (const s of SCREENS) {
        await go(s);
        expect(await page.locator(".error").count()).toBe(0);
        await page.screenshot({ path: join(shots, `${s.split("/")[0] || "overview"}-${theme}.png`) });
      }
    }
    // The theme follows the system until one is picked, and a pick wins over the system's.
    const background = () =>
      page.evaluate(() => (globalThis as unknown as Win).getComputedStyle((globalThis as unknown as Win).document.body).backgroundColor);
    const [LIGHT, DARK] = ["rgb(247, 247, 245)", "rgb(21, 23, 27)"];
    for (const [system, pick, expected] of [
      ["dark", "system", DARK],
      ["dark", "light", LIGHT],
      ["light", "dark", DARK],
      ["light", "system", LIGHT],
    ] as const) {
      await page.emulateMedia({ colorScheme: system });
      await page.getByLabel("Theme").selectOption(pick);
      await page
        .waitForFunction(
          (want) => (globalThis as unknown as Win).getComputedStyle((globalThis as unknown as Win).document.body).backgroundColor === want,
          expected,
          { timeout: 2000 },
        )
        .catch(() => undefined);
      expect([system, pick, await background()]).toEqual([system, pick, expected]);
    }
    await page.setViewportSize({ width: 390, height: 844 });
    await go("data/todo");
    await page.screenshot({ path: join(shots, "data-phone.png") });
    await page.setViewportSize({ width: 1280, height: 800 });
  }, 90_000);
});

describe("the status page", () => {
  test("shows the figures and the last hour's charts, light and dark", async () => {
    await page.goto(`${server.url}/_status/`);
    await page.getByTestId("areas").waitFor();
    await expect(page.locator(".chart canvas").count()).resolves.toBe(3);
    const areas = (await page.getByTestId("areas").textContent()) ?? "";
    for (const a of ["data", "users", "admin"]) expect(areas).toContain(a);
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.screenshot({ path: join(shots, `status-${scheme}.png`), fullPage: true });
    }
    await page.emulateMedia({ colorScheme: "light" });
  }, 30_000);
});

describe("a viewer", () => {
  test("sees no keys, settings or admins, cannot edit in the grid, and the API refuses its writes", async () => {
    await go("");
    await signOut();
    await signIn(VIEWER);
    const nav = (await page.getByRole("navigation", { name: "Screens" }).textContent()) ?? "";
    for (const hidden of ["Keys", "Settings", "Admins", "Outbox"]) expect(nav).not.toContain(hidden);
    await go("data/todo");
    const grid = page.getByRole("grid");
    await grid.locator("tbody tr").first().waitFor();
    expect(await page.getByRole("button", { name: "+ New object" }).count()).toBe(0);
    expect(await grid.getByRole("button", { name: /^Delete/ }).count()).toBe(0);
    await grid.locator('td[data-cell="0-1"]').dblclick();
    expect(await page.getByLabel("Cell value").count()).toBe(0);
    // Not only hidden: the admin API itself refuses.
    const put = await apiFromPage("PUT", "/schemas/todo", { fields: {} });
    expect(put.status).toBe(403);
    expect(put.body.error).toContain("viewer");
    expect((await apiFromPage("GET", "/keys")).status).toBe(403);
    expect((await apiFromPage("POST", "/data/development/todo", { title: "x" })).status).toBe(403);
    await go("keys");
    await expect(page.getByRole("alert").textContent()).resolves.toContain("403");
    await page.screenshot({ path: join(shots, "viewer-keys-refused.png") });
  }, 30_000);
});
