/**
 * End to end in a real VS Code (code-server + headless chromium): the panel, streaming, permission
 * with "View diff", the edit reaching the open editor, questions, Stop, the "fix" code action, and a
 * window reload rebuilding the panel from `agent/session/load`. Against the real server and the
 * fake LLM. Screenshots go to test-results/.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe } from "node:test";
import { openFile, runCommand, screenshot, startWorkbench, workbenchSteps, until, type Workbench } from "./harness";

const A_PY = "value = 1\n";
const BAD_JSON = '{\n  "name": "demo"\n  "version": 1\n}\n';

describe("VS Code (code-server) with lsp-agent", { timeout: 240_000 }, () => {
  let wb: Workbench;
  const step = workbenchSteps("", async () => (wb = await startWorkbench({ "a.py": A_PY, "bad.json": BAD_JSON })));

  const web = () => wb.web;
  const state = () => web().getByTestId("session-state");

  step("the panel opens and the server starts", async () => {
    await openFile(wb.page, "a.py");
    await wb.page.locator(".monaco-editor .view-line", { hasText: "value = 1" }).first().waitFor();
    await runCommand(wb.page, "LSP Agent: Open Chat");
    await web().getByTestId("prompt-input").waitFor();
    await until("the server to run", async () => (await web().getByTestId("server-status").isHidden()) || undefined, 30000);
    assert.equal(await state().textContent(), "no session");
  });

  step("a chat from the panel streams the answer; an edit asks, View diff shows it, Allow applies it", async () => {
    const file = path.join(wb.ws, "a.py");
    await wb.fake.setScript({
      turns: [
        {
          text: "I will set the value to two, exactly as you asked, with one small edit.",
          chunk_delay: 0.08,
          tool_calls: [{ name: "edit", input: { file_path: file, old_string: "value = 1", new_string: "value = 2" } }],
        },
        { text: "Done: **value** is now `2`." },
      ],
    });
    await web().getByTestId("prompt-input").fill("set value to 2");
    await web().getByTestId("send-button").click();
    await web().getByTestId("message-user").filter({ hasText: "set value to 2" }).waitFor();

    const answer = web().getByTestId("message-assistant").first();
    const first = await until("the first streamed words", async () => (await answer.textContent().catch(() => ""))?.trim());
    await answer.filter({ hasText: "with one small edit." }).waitFor();
    const full = (await answer.textContent())!.trim();
    assert.ok(first.length < full.length && full.startsWith(first), `streamed: first saw ${JSON.stringify(first)}, then ${JSON.stringify(full)}`);

    const card = web().getByTestId("permission-card");
    await card.waitFor();
    assert.equal(await card.getAttribute("data-permission"), "edit");
    for (const id of ["permission-allow-once", "permission-deny", "permission-deny-with-reason", "permission-view-diff"]) {
      assert.equal(await card.getByTestId(id).count(), 1, `${id} on the permission card`);
    }
    assert.equal(await state().textContent(), "needs your answer");

    await card.getByTestId("permission-view-diff").click();
    const diff = wb.page.locator(".monaco-diff-editor");
    await diff.waitFor();
    await wb.page.locator(".tab.active", { hasText: "agent proposal" }).waitFor();
    await diff.locator(".editor.modified .view-line", { hasText: "value = 2" }).waitFor();
    await diff.locator(".editor.original .view-line", { hasText: "value = 1" }).waitFor();
    await wb.page.waitForTimeout(300); // let the diff editor finish its layout for the picture
    await screenshot(wb.page, "panel-mid-session.png", "#workbench\\.parts\\.sidebar");
    await screenshot(wb.page, "workbench-mid-session.png");

    await card.getByTestId("permission-allow-once").click();
    await card.waitFor({ state: "detached" });
    await web().locator('[data-testid="tool-call"][data-tool-name="edit"][data-status="completed"]').waitFor();
    await web().getByTestId("message-assistant").filter({ hasText: "value is now 2" }).waitFor();
    await until("the session to be idle", async () => (await state().textContent()) === "idle");

    // the edit went to the open editor's buffer, which the extension then saved for the agent
    await openFile(wb.page, "a.py");
    await wb.page.locator(".editor-group-container.active .monaco-editor .view-line", { hasText: "value = 2" }).first().waitFor();
    assert.equal(fs.readFileSync(file, "utf8"), A_PY.replace("1", "2"));
  });

  step("a question is answered in the panel", async () => {
    await wb.fake.setScript({
      turns: [
        {
          tool_calls: [
            {
              name: "question",
              input: { questions: [{ header: "Runner", question: "Which test runner?", options: [{ label: "pytest" }, { label: "unittest" }] }] },
            },
          ],
        },
        { text: "Going with the chosen runner." },
      ],
    });
    const before = (await wb.fake.modelRequests()).length;
    await web().getByTestId("prompt-input").fill("which runner?");
    await web().getByTestId("send-button").click();
    const card = web().getByTestId("question-card");
    await card.waitFor();
    await card.locator('[data-testid="question-option"][data-label="pytest"]').click();
    await card.getByTestId("question-submit").click();
    await web().getByTestId("message-assistant").filter({ hasText: "Going with the chosen runner." }).waitFor();
    const requests = (await wb.fake.modelRequests()).slice(before);
    assert.equal(requests.length, 2);
    assert.match(JSON.stringify(requests[1].body.messages.at(-1)), /pytest/);
  });

  step("Undo puts the last prompt back in the input and hides its turn; Redo restores it", async () => {
    const asked = web().getByTestId("message-user").filter({ hasText: "which runner?" });
    await web().getByTestId("undo-button").click();
    await until("the prompt back in the input", async () => (await web().getByTestId("prompt-input").inputValue()) === "which runner?");
    await asked.waitFor({ state: "hidden" });
    await web().getByTestId("notice").filter({ hasText: "Undone" }).waitFor();
    await web().getByTestId("redo-button").click();
    await asked.waitFor({ state: "visible" });
    await web().getByTestId("prompt-input").fill("");
  });

  step("Ask… from the palette; Stop ends a running bash tool", async () => {
    await web().getByTestId("new-session-button").click();
    // the first step's edit of a.py still waits for Keep or Undo: + New asks first
    const dialog = wb.page.locator(".monaco-dialog-box", { hasText: "wait for Keep or Undo" });
    await dialog.waitFor();
    await dialog.locator(".monaco-button", { hasText: "Keep All, Then Start" }).click();
    await until("a new, empty session", async () => (await web().getByTestId("message-user").count()) === 0 && (await state().textContent()) === "idle");
    await wb.fake.setScript({ turns: [{ tool_calls: [{ name: "bash", input: { command: "sleep 30", description: "wait a long time" } }] }] });
    // this time from the palette: "LSP Agent: Ask…" asks with an input box
    await runCommand(wb.page, "LSP Agent: Ask…");
    await wb.page.locator(".quick-input-widget", { hasText: "What should the agent do?" }).waitFor();
    await wb.page.keyboard.type("run the slow command");
    await wb.page.keyboard.press("Enter");
    await web().getByTestId("message-user").filter({ hasText: "run the slow command" }).waitFor();
    const card = web().getByTestId("permission-card");
    await card.waitFor();
    assert.equal(await card.getAttribute("data-permission"), "bash");
    await card.getByTestId("permission-allow-once").click();
    const tool = web().locator('[data-testid="tool-call"][data-tool-name="bash"]');
    await tool.and(web().locator('[data-status="in_progress"]')).waitFor();
    const stoppedAt = Date.now();
    await web().getByTestId("stop-button").click();
    await tool.and(web().locator('[data-status="interrupted"]')).waitFor({ timeout: 10000 });
    await until("the turn to end as cancelled", async () => (await state().textContent()) === "idle (cancelled)");
    assert.ok(Date.now() - stoppedAt < 10000);
  });

  step("the 'fix' code action on a diagnostic starts a session whose first model request has it", async () => {
    await wb.fake.setScript({
      turns: [
        // the agent's diagnostics tool reads what the extension forwarded (agent/diagnostics)
        { tool_calls: [{ name: "diagnostics", input: { file_path: path.join(wb.ws, "bad.json") } }] },
        { text: "The JSON needs a comma after the name." },
      ],
    });
    const before = (await wb.fake.modelRequests()).length;
    await openFile(wb.page, "bad.json");
    const editor = wb.page.locator(".editor-group-container.active .monaco-editor");
    await editor.locator(".squiggly-error").first().waitFor();
    // put the cursor on the diagnostic, then open the quick fixes
    await editor.locator(".view-line", { hasText: '"version": 1' }).first().click();
    await wb.page.keyboard.press("Home");
    await wb.page.keyboard.press("Control+.");
    const fix = wb.page.locator(".action-widget .monaco-list-row", { hasText: "Ask agent to fix" }).first();
    await fix.waitFor();
    const label = (await fix.textContent()) ?? "";
    // the menu's pointer block swallows clicks: choose with the keyboard
    for (let i = 0; i < 10 && !(await wb.page.locator(".action-widget .monaco-list-row.focused", { hasText: "Ask agent to fix" }).count()); i++) {
      await wb.page.keyboard.press("ArrowDown");
    }
    await wb.page.keyboard.press("Enter");
    await web().getByTestId("message-assistant").filter({ hasText: "needs a comma" }).waitFor();
    const requests = (await wb.fake.modelRequests()).slice(before);
    assert.ok(requests.length >= 1, "the fix started a model request");
    const firstRequest = JSON.stringify(requests[0].body.messages);
    const message = label.replace(/^.*Ask agent to fix:\s*/, "").trim();
    assert.ok(message && firstRequest.includes(message), `the diagnostic "${message}" in the first model request`);
    assert.equal(requests.length, 2);
    const toolResult = JSON.stringify(requests[1].body.messages.at(-1));
    assert.ok(toolResult.includes(message), `forwarded diagnostics in the diagnostics tool's result: ${toolResult.slice(0, 400)}`);
  });

  step("hiding and showing the panel keeps the conversation", async () => {
    const shown = await web().getByTestId("message-assistant").allTextContents();
    await wb.page.keyboard.press("Control+B");
    await wb.page.locator("#workbench\\.parts\\.sidebar").waitFor({ state: "hidden" });
    await wb.page.keyboard.press("Control+B");
    await web().getByTestId("prompt-input").waitFor();
    assert.deepEqual(await web().getByTestId("message-assistant").allTextContents(), shown);
  });

  step("a window reload rebuilds the panel from agent/session/load", async () => {
    const shown = await web().getByTestId("message-user").allTextContents();
    assert.ok(shown.length > 0, "the panel shows a session");
    await wb.page.reload();
    await wb.page.locator(".monaco-workbench").waitFor();
    // the palette lists the extension's commands once its host is up: the status bar item says so
    await wb.page.locator(".statusbar-item", { hasText: "Agent:" }).waitFor();
    await runCommand(wb.page, "LSP Agent: Open Chat");
    await web().getByTestId("prompt-input").waitFor();
    await web().getByTestId("message-user").filter({ hasText: shown.at(-1)!.trim().slice(0, 20) }).first().waitFor();
  });

  step("a server that cannot start says how to fix it; a settings change restarts it", async () => {
    const python = JSON.parse(fs.readFileSync(path.join(wb.tmp, "user-data/User/settings.json"), "utf8"))["lspAgent.serverCommand"];
    await wb.setSettings({ "lspAgent.serverCommand": ["/nonexistent/lsp-agent", "serve"] });
    const toast = wb.page.locator(".notification-toast", { hasText: "lspAgent.serverCommand" });
    await toast.waitFor();
    assert.match((await toast.textContent()) ?? "", /failed to start.*Fix the setting/);
    await toast.getByRole("button", { name: "Open Settings" }).waitFor();
    const banner = web().getByTestId("server-status");
    await banner.waitFor();
    assert.match((await banner.textContent()) ?? "", /\/nonexistent\/lsp-agent/);
    await wb.page.locator(".statusbar-item", { hasText: "Agent: not started" }).waitFor();
    await screenshot(wb.page, "server-failed.png");

    await wb.setSettings({ "lspAgent.serverCommand": python });
    await banner.waitFor({ state: "hidden" });
    await web().getByTestId("message-user").first().waitFor();
  });
});
