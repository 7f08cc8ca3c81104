/**
 * End to end: commands issued while the server starts wait for it and then run (issue 24). "LSP
 * Agent: Ask…" is run from the palette the moment the window is up, before anything waited for
 * the server: once against the real server as it is, once against one whose start is slowed down
 * (a cold machine), where the status bar must say "starting…" meanwhile. Then a server that
 * answers `initialize` but cannot build its agent says why and offers its log.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe } from "node:test";
import { screenshot, startWorkbench, workbenchSteps, tools, until, type Step, type Workbench } from "./harness";

/** A start this many seconds slower than the real one: long enough that the command surely comes first. */
const SLOW_START_S = 8;

function suite(name: string, settings: (python: string) => Record<string, unknown>, steps: (wb: () => Workbench, step: Step) => void) {
  describe(name, { timeout: 240_000 }, () => {
    let wb: Workbench;
    const step = workbenchSteps("startup-", async () => (wb = await startWorkbench({ "a.py": "value = 1\n" }, settings(tools().python))));
    steps(() => wb, step);
  });
}


/**
 * Runs "LSP Agent: Ask…" from the palette as soon as the palette lists it (right after the window
 * opens, the extensions' commands are not there yet: close it and look again, as a person would),
 * and types `prompt` into its input box.
 */
async function askFromPalette(wb: Workbench, prompt: string): Promise<void> {
  const title = "LSP Agent: Ask…";
  const row = wb.page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first();
  const input = wb.page.locator(".quick-input-widget input");
  await until(
    "the palette to list the command",
    async () => {
      await wb.page.keyboard.press("F1");
      if (!(await input.waitFor({ timeout: 3000 }).then(() => true, () => false))) return false;
      await wb.page.keyboard.type(title);
      if (await row.waitFor({ timeout: 2000 }).then(() => true, () => false)) {
        await wb.page.keyboard.press("Enter");
        return true;
      }
      await wb.page.keyboard.press("Escape");
      return false;
    },
    60000,
  );
  await wb.page.locator(".quick-input-widget", { hasText: "Ask the agent" }).waitFor();
  await wb.page.keyboard.type(prompt);
  await wb.page.keyboard.press("Enter");
}

/** The text of every notification toast with the error icon. */
async function errorToasts(wb: Workbench): Promise<string[]> {
  const toasts = wb.page.locator(".notification-toast").filter({ has: wb.page.locator(".codicon-error") });
  return toasts.allTextContents();
}

/** The prompt reached the fake LLM, the answer is in the panel, the session ended, and no error was shown. */
async function answered(wb: Workbench, prompt: string, answer: string): Promise<void> {
  await wb.web.getByTestId("message-assistant").filter({ hasText: answer }).waitFor({ timeout: 60000 });
  await until("the session to be idle", async () => (await wb.web.getByTestId("session-state").textContent()) === "idle");
  const requests = await wb.fake.modelRequests();
  assert.equal(requests.length, 1, "one model request");
  assert.match(JSON.stringify(requests[0].body.messages), new RegExp(prompt));
  assert.deepEqual(await errorToasts(wb), []);
  assert.equal(await wb.web.getByTestId("server-status").isHidden(), true, "the panel's server banner is gone");
}

suite(
  "VS Code: Ask… the moment the extension activates",
  () => ({}),
  (wb, step) => {
    step("reaches the model and answers, with no error", async () => {
      await wb().fake.setScript({ turns: [{ text: "Hello from a server that was still starting." }] });
      await askFromPalette(wb(), "say hello right away");
      await answered(wb(), "say hello right away", "Hello from a server that was still starting.");
    });
  },
);

suite(
  "VS Code: Ask… while a slow server starts",
  (python) => ({ "lspAgent.serverCommand": ["/bin/sh", "-c", `sleep ${SLOW_START_S}; exec "$0" -m lsp_agent serve`, python] }),
  (wb, step) => {
    step("shows starting…, waits for the server, then reaches the model and answers", async () => {
      await wb().fake.setScript({ turns: [{ text: "Answered once the server was up." }] });
      await askFromPalette(wb(), "wait for the server");
      // the command is waiting, not failing: the status bar says so
      await wb().page.locator(".statusbar-item", { hasText: "Agent: starting…" }).waitFor();
      // and so does the panel the command opened
      const banner = wb().web.getByTestId("server-status");
      await banner.filter({ hasText: "Starting the LSP Agent server…" }).waitFor();
      assert.equal(await banner.getAttribute("data-status"), "starting");
      await screenshot(wb().page, "server-starting.png");
      await answered(wb(), "wait for the server", "Answered once the server was up.");
      await wb().page.locator(".statusbar-item", { hasText: "Agent: idle" }).waitFor();
    });

    step("a server that cannot build its agent says why, offers its log, and commands give the reason", async () => {
      // the data folder under a regular file: `initialize` is answered, opening the store fails
      const blocker = path.join(wb().tmp, "not-a-folder");
      fs.writeFileSync(blocker, "");
      await wb().setSettings({ "lspAgent.serverEnv": { LSP_AGENT_LOG: "INFO", LSP_AGENT_DATA_DIR: path.join(blocker, "data") } });
      const toast = wb().page.locator(".notification-toast", { hasText: "lsp-agent failed to start" });
      await toast.waitFor({ timeout: 60000 });
      assert.match((await toast.textContent()) ?? "", /not-a-folder/);
      const banner = wb().web.getByTestId("server-status");
      await until("the panel to show the failure", async () => (await banner.getAttribute("data-status")) === "failed");
      assert.match((await banner.textContent()) ?? "", /failed to start/);
      await wb().web.getByTestId("server-show-log").waitFor();
      await wb().page.locator(".statusbar-item", { hasText: "Agent: not started" }).waitFor();
      await screenshot(wb().page, "server-failed-to-start.png");

      await toast.getByRole("button", { name: "Show Log" }).click();
      await toast.waitFor({ state: "detached" });
      await wb().page.locator("#workbench\\.parts\\.panel .view-line", { hasText: "lsp-agent failed to start" }).first().waitFor();

      // a command now fails with the reason, never "not running" (a palette command's error is a dialog)
      await askFromPalette(wb(), "anything");
      const reason = wb().page.locator(".monaco-dialog-box, .notification-toast").filter({ hasText: "failed to start" });
      await reason.waitFor();
      assert.match((await reason.textContent()) ?? "", /not-a-folder/);
      assert.doesNotMatch((await reason.textContent()) ?? "", /not running/);
      await wb().page.keyboard.press("Escape");
    });
  },
);
