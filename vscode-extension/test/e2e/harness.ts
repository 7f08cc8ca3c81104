/**
 * The e2e harness: a real VS Code (code-server from test/e2e/node_modules) with this extension's
 * .vsix installed (LSP_AGENT_VSIX, e.g. scripts/package's, else one packaged here),
 * driven by playwright-core in Debian's headless chromium, against the real `lsp-agent serve` and
 * the fake LLM (`python -m lsp_agent.testing.fake_llm`). Everything runs in a fresh temp folder
 * (HOME, XDG config, LSP_AGENT_DATA_DIR, user data, extensions); only the process groups started
 * here are killed. Missing tools fail with a message saying how to install them.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as http from "node:http";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import * as readline from "node:readline";
import { after, before, it, type TestContext } from "node:test";
import { chromium, type Browser, type FrameLocator, type Page } from "playwright-core";

/** test/e2e: its own package.json holds code-server and playwright-core (compiled to test/e2e/out). */
export const E2E_ROOT = path.resolve(__dirname, "..");
export const EXTENSION_ROOT = path.resolve(E2E_ROOT, "../..");
export const REPO_ROOT = path.resolve(EXTENSION_ROOT, "..");
export const RESULTS = path.join(EXTENSION_ROOT, "test-results");

function requireFile(file: string | undefined, what: string, fix: string): string {
  if (!file || !fs.existsSync(file)) throw new Error(`${what} not found${file ? ` at ${file}` : ""}. ${fix}`);
  return file;
}

export function tools() {
  const codeServer = requireFile(
    process.env.CODE_SERVER ?? path.join(E2E_ROOT, "node_modules/.bin/code-server"),
    "code-server",
    "Run `npm run test:e2e` in vscode-extension/ (it installs test/e2e/package.json; see docs/vscode.md: it needs the ripgrep cache seeded and build tools; scripts/ci-setup.sh does both).",
  );
  const browser = requireFile(
    process.env.CHROMIUM ?? ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((f) => fs.existsSync(f)),
    "chromium",
    "Install Debian's: `apt-get install -y chromium`, or set CHROMIUM=/path/to/chromium.",
  );
  const python = requireFile(
    process.env.LSP_AGENT_PYTHON ?? path.join(REPO_ROOT, ".venv/bin/python"),
    "the Python with lsp_agent",
    "Create the repo's venv (`./scripts/test` does, or `python3 -m venv .venv && .venv/bin/pip install -e .`), or set LSP_AGENT_PYTHON.",
  );
  const vsce = requireFile(path.join(EXTENSION_ROOT, "node_modules/.bin/vsce"), "vsce", "Run `npm ci` in vscode-extension/.");
  requireFile(path.join(EXTENSION_ROOT, "dist/extension.js"), "the built extension", "Run `npm run build` first.");
  return { codeServer, browser, python, vsce };
}

const httpJson = (method: string, url: string, body?: unknown): Promise<any> =>
  new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = http.request(url, { method, headers: data ? { "content-type": "application/json", "content-length": data.length } : {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        if ((res.statusCode ?? 500) >= 400) reject(new Error(`${method} ${url}: ${res.statusCode} ${text}`));
        else resolve(text ? JSON.parse(text) : null);
      });
    });
    req.on("error", reject);
    if (data) req.write(data);
    req.end();
  });

/** The fake LLM as a separate process, driven through its /_script and /_log endpoints. */
export class FakeLLM {
  private constructor(private readonly proc: ChildProcess, readonly baseUrl: string) {}

  static async start(python: string, dir: string): Promise<FakeLLM> {
    const script = path.join(dir, "empty-script.json");
    fs.writeFileSync(script, JSON.stringify({ turns: [] }));
    const proc = spawn(python, ["-m", "lsp_agent.testing.fake_llm", "--script", script], {
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
      cwd: dir,
    });
    const stderr: string[] = [];
    proc.stderr!.on("data", (c) => stderr.push(String(c)));
    const line = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the fake LLM did not start: ${stderr.join("")}`)), 20000);
      readline.createInterface({ input: proc.stdout! }).once("line", (l) => {
        clearTimeout(timer);
        resolve(l);
      });
      proc.once("exit", (code) => reject(new Error(`the fake LLM exited (${code}): ${stderr.join("")}`)));
    });
    return new FakeLLM(proc, JSON.parse(line).anthropic_base_url);
  }

  setScript(script: unknown): Promise<unknown> {
    return httpJson("POST", `${this.baseUrl}/_script`, script);
  }

  /** The request log (model requests only, side requests such as titles left out). */
  async modelRequests(): Promise<{ seq: number; turn: number | string | null; body: any }[]> {
    const log: { seq: number; turn: number | string | null; body: any }[] = await httpJson("GET", `${this.baseUrl}/_log`);
    return log.filter((r) => r.turn !== "side");
  }

  stop(): void {
    killGroup(this.proc);
  }
}

function killGroup(proc: ChildProcess | undefined): void {
  if (!proc?.pid || proc.exitCode !== null) return;
  try {
    process.kill(-proc.pid, "SIGTERM");
  } catch {
    // already gone
  }
}

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
    srv.on("error", reject);
  });

const waitHttp = async (url: string, ms: number): Promise<void> => {
  const end = Date.now() + ms;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      http.get(url, (r) => { r.resume(); resolve(true); }).on("error", () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > end) throw new Error(`nothing listened at ${url} after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
};

export interface Workbench {
  tmp: string;
  ws: string;
  page: Page;
  fake: FakeLLM;
  /** The chat panel's document (two iframes deep). */
  web: FrameLocator;
  close(failed: boolean): Promise<void>;
  /** Changes user settings (VS Code picks the file change up, as when a person edits it). */
  setSettings(patch: Record<string, unknown>): Promise<void>;
  logs(): string;
}

/** Starts code-server with the extension, the fake LLM and chromium, and opens `files` in a folder; `settings` go into the user settings; `prepare` runs on the folder before code-server opens it (e.g. `git init`). */
export async function startWorkbench(files: Record<string, string>, settings: Record<string, unknown> = {}, prepare?: (ws: string) => void): Promise<Workbench> {
  const { codeServer, browser: browserPath, python, vsce } = tools();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "lsp-agent-vscode-e2e-"));
  const home = path.join(tmp, "home");
  const userData = path.join(tmp, "user-data");
  const extDir = path.join(tmp, "extensions");
  const ws = path.join(tmp, "ws");
  for (const d of [path.join(home, ".config"), path.join(userData, "User"), extDir, ws, path.join(tmp, "data")]) fs.mkdirSync(d, { recursive: true });
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(ws, name)), { recursive: true });
    fs.writeFileSync(path.join(ws, name), text);
  }
  prepare?.(ws);


  const settingsFile = path.join(userData, "User", "settings.json");
  fs.writeFileSync(
    settingsFile,
    JSON.stringify(
      {
        "security.workspace.trust.enabled": false,
        "workbench.startupEditor": "none",
        "telemetry.telemetryLevel": "off",
        "update.mode": "none",
        "extensions.autoCheckUpdates": false,
        "extensions.autoUpdate": false,
        "extensions.ignoreRecommendations": true,
        "workbench.enableExperiments": false,
        "workbench.tips.enabled": false,
        "chat.commandCenter.enabled": false,
        "editor.quickSuggestions": { other: false, comments: false, strings: false },
        "files.autoSave": "off",
        // the test types settings.json: no brackets or quotes closed for it
        "editor.autoClosingBrackets": "never",
        "editor.autoClosingQuotes": "never",
        "editor.autoIndent": "none",
        "editor.autoSurround": "never",
        "lspAgent.serverCommand": [python, "-m", "lsp_agent", "serve"],
        "lspAgent.serverEnv": { LSP_AGENT_LOG: "INFO" },
        ...settings,
      },
      null,
      1,
    ),
  );

  const env: NodeJS.ProcessEnv = {};
  for (const key of ["PATH", "LANG", "LC_ALL", "TMPDIR", "TERM"]) if (process.env[key]) env[key] = process.env[key];
  Object.assign(env, {
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, ".config"),
    XDG_DATA_HOME: path.join(home, ".local/share"),
    LSP_AGENT_DATA_DIR: path.join(tmp, "data"),
    ANTHROPIC_API_KEY: "sk-vscode-e2e",
    LSP_AGENT_MODEL: "anthropic/claude-test",
  });
  // install the VSIX the way a user would (`code --install-extension`): scripts/package's, else
  // one packaged now (offline)
  let vsix = process.env.LSP_AGENT_VSIX;
  if (vsix) requireFile(vsix, "LSP_AGENT_VSIX", "Run scripts/package, or unset LSP_AGENT_VSIX.");
  else {
    vsix = path.join(tmp, "lsp-agent.vsix");
    execFileSync(vsce, ["package", "--no-dependencies", "--skip-license", "--allow-missing-repository", "-o", vsix], { cwd: EXTENSION_ROOT, stdio: "pipe" });
  }
  const csDirs = ["--config", path.join(tmp, "config.yaml"), "--user-data-dir", userData, "--extensions-dir", extDir];
  execFileSync(codeServer, [...csDirs, "--install-extension", vsix], { env, stdio: "pipe" });
  const listed = execFileSync(codeServer, [...csDirs, "--list-extensions", "--show-versions"], { env, encoding: "utf8" });
  const manifest = JSON.parse(fs.readFileSync(path.join(EXTENSION_ROOT, "package.json"), "utf8"));
  const id = `${manifest.publisher}.${manifest.name}@${manifest.version}`;
  if (!listed.split("\n").includes(id)) throw new Error(`${vsix} installed, but code-server lists: ${listed.trim() || "nothing"} (not ${id})`);
  const fake = await FakeLLM.start(python, tmp);
  env.ANTHROPIC_BASE_URL = fake.baseUrl;
  // an `openai-compatible` provider (e.g. a fill-in-the-middle completion model) reaches the fake too
  env.OPENAI_BASE_URL = `${fake.baseUrl}/v1`;
  const port = await freePort();
  const csLog = fs.openSync(path.join(tmp, "code-server.log"), "w");
  const cs = spawn(
    codeServer,
    ["--bind-addr", `127.0.0.1:${port}`, "--auth", "none", "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust",
      "--disable-getting-started-override", "--config", path.join(tmp, "config.yaml"), "--user-data-dir", userData, "--extensions-dir", extDir, ws],
    { stdio: ["ignore", csLog, csLog], detached: true, env },
  );
  let browser: Browser | undefined;
  const close = async (failed: boolean) => {
    await browser?.close().catch(() => undefined);
    killGroup(cs);
    fake.stop();
    if (!failed && !process.env.KEEP_E2E_TMP) fs.rmSync(tmp, { recursive: true, force: true, maxRetries: 3 });
  };
  try {
    await waitHttp(`http://127.0.0.1:${port}/healthz`, 60000);
    browser = await chromium.launch({
      executablePath: browserPath,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.setDefaultTimeout(Number(process.env.STEP_TIMEOUT_MS ?? 30000));
    if (process.env.DEBUG_CONSOLE) page.on("console", (m) => console.log("[browser]", m.type(), m.text()));
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`);
    await page.locator(".monaco-workbench").waitFor();
    await page.locator(".explorer-folders-view").waitFor();
    const web = page.frameLocator("iframe.webview").frameLocator("#active-frame");
    // code-server does not notice a settings.json written behind its back: edit it in the editor
    const setSettings = async (patch: Record<string, unknown>) => {
      const text = JSON.stringify({ ...JSON.parse(fs.readFileSync(settingsFile, "utf8")), ...patch }, null, 1);
      await runCommand(page, "Preferences: Open User Settings (JSON)");
      const editor = page.locator(".editor-group-container.active .monaco-editor");
      await page.locator(".tab.active", { hasText: "settings.json" }).waitFor();
      await editor.locator(".view-line").first().click();
      await page.keyboard.press("Control+A");
      await page.keyboard.press("Delete");
      await page.keyboard.insertText(text);
      await page.keyboard.press("Control+S");
      const saved = () => {
        try {
          return JSON.stringify(JSON.parse(fs.readFileSync(settingsFile, "utf8"))) === JSON.stringify(JSON.parse(text));
        } catch {
          return false;
        }
      };
      await until("settings.json saved", async () => saved(), 10000).catch((e) => {
        throw new Error(`${e.message}; the file has: ${fs.readFileSync(settingsFile, "utf8").slice(0, 600)}`);
      });
      // the file is written before the editor clears its dirty mark: close only a clean editor
      await page.locator(".tab.active.dirty").waitFor({ state: "detached" });
      await page.keyboard.press("Control+W");
      await page.locator(".tab", { hasText: "settings.json" }).waitFor({ state: "detached" });
    };
    return { tmp, ws, page, fake, web, close, setSettings, logs: () => logHint(tmp, userData) };
  } catch (error) {
    await close(true);
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${logHint(tmp, userData)}`);
  }
}

function logHint(tmp: string, userData: string): string {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.existsSync(dir) ? fs.readdirSync(dir, { withFileTypes: true }) : []) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/LSP Agent|exthost/.test(e.name)) found.push(p);
    }
  };
  walk(path.join(userData, "logs"));
  return `logs kept in ${tmp}: code-server.log; ${found.join(", ")}`;
}

// -- driving the workbench -----------------------------------------------------------------------

export async function runCommand(page: Page, title: string): Promise<void> {
  const input = page.locator(".quick-input-widget input");
  // a key press can land while focus is moving (e.g. into a webview that is loading): retry
  for (let attempt = 0; ; attempt++) {
    await page.keyboard.press(attempt % 2 ? "Control+Shift+P" : "F1");
    try {
      await input.waitFor({ timeout: 3000 });
      break;
    } catch (error) {
      if (attempt >= 4) throw error;
      await page.locator("#workbench\\.parts\\.statusbar").click({ position: { x: 2, y: 2 }, timeout: 2000 }).catch(() => undefined);
    }
  }
  await page.keyboard.type(title);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first().waitFor();
  await page.keyboard.press("Enter");
}

/** Quick open: `name` is a file name, or a full path (to pass over other entries of its name). */
export async function openFile(page: Page, file: string): Promise<void> {
  const name = path.basename(file);
  await page.keyboard.press("Control+P");
  await page.locator(".quick-input-widget input").waitFor();
  await page.keyboard.type(file);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: name }).first().waitFor();
  await page.keyboard.press("Enter");
  await page.locator(`.tab.active[data-resource-name="${name}"], .tab.active:has-text("${name}")`).first().waitFor();
}

export async function screenshot(page: Page, name: string, locator?: string): Promise<string> {
  fs.mkdirSync(RESULTS, { recursive: true });
  const file = path.join(RESULTS, name);
  if (locator) await page.locator(locator).screenshot({ path: file });
  else await page.screenshot({ path: file });
  return file;
}

/**
 * Waits until the page's finite animations and transitions (e.g. a CodeLens fading in) are over,
 * two frames apart; endless ones (spinners) do not count.
 */
export async function settled(page: Page, ms = 5000): Promise<void> {
  const idle = () =>
    page.evaluate(async () => {
      const finite = () => document.getAnimations().filter((a) => a.playState === "running" && a.effect?.getComputedTiming().iterations !== Infinity);
      await Promise.all(finite().map((a) => a.finished.catch(() => undefined)));
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      return finite().length === 0;
    });
  await until("the page to settle", idle, ms);
}

/** Polls `f` until it returns a truthy value. */
export async function until<T>(what: string, f: () => Promise<T | undefined | null | false>, ms = 20000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A suite's step: one `it`, failing with the workbench's start error if it did not start. */
export type Step = (name: string, body: () => Promise<void>) => void;

/**
 * Registers a suite's workbench (call it inside `describe`): `start` runs before the steps (a
 * start that fails fails every step, never skips it: a missing tool is a failure) and the
 * workbench closes after them, printing its logs when a step failed. Answers the step runner,
 * which keeps a screenshot `failure-<prefix><step>.png` of the page where a step failed.
 */
export function workbenchSteps(prefix: string, start: () => Promise<Workbench>): Step {
  let wb: Workbench | undefined;
  let failed = false;
  let setupError: unknown;
  before(async () => {
    try {
      wb = await start();
    } catch (error) {
      setupError = error;
    }
  });
  after(async () => {
    if (failed) console.log(wb?.logs());
    await wb?.close(failed);
  });
  return (name, body) =>
    it(name, async (t: TestContext) => {
      if (setupError) throw setupError;
      try {
        await body();
      } catch (error) {
        failed = true;
        if (wb) {
          const file = await screenshot(wb.page, `failure-${prefix}${name.replace(/\W+/g, "-")}.png`).catch(() => "");
          t.diagnostic(`screenshot: ${file}`);
        }
        throw error;
      }
    });
}
