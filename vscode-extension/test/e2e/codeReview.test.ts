/**
 * The agent's review of YOUR changes in a real VS Code (issue 37 §1): "LSP Agent: Review My
 * Changes…" on a git repository with a planted bug publishes the fake model's finding as a
 * diagnostic at its line; its quick fix "Fix with agent" starts a prompt naming it; "Dismiss"
 * removes it. Against the real server and the fake LLM.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe } from "node:test";
import { openFile, runCommand, startWorkbench, until, workbenchSteps, type Workbench } from "./harness";

const GOOD = "def mean(values):\n    total = sum(values)\n    return total / len(values)\n";
const PLANTED = "def mean(values):\n    total = sum(values)\n    return total / (len(values) - 1)\n";
const MESSAGE = "Divides by len - 1: one value divides by zero.";

describe("the agent's review of your changes in VS Code", { timeout: 240_000 }, () => {
  let wb: Workbench;
  const step = workbenchSteps("code-review-", async () => (wb = await startWorkbench({ "stats.py": GOOD })));

  const git = (...args: string[]) => execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.invalid", ...args], { cwd: wb.ws, stdio: "ignore" });

  /** Chooses `title` among the quick fixes at the cursor (the keyboard: the menu swallows clicks). */
  const quickFix = async (title: string) => {
    await wb.page.keyboard.press("Control+.");
    const row = wb.page.locator(".action-widget .monaco-list-row", { hasText: title }).first();
    await row.waitFor();
    for (let i = 0; i < 10 && !(await wb.page.locator(".action-widget .monaco-list-row.focused", { hasText: title }).count()); i++) {
      await wb.page.keyboard.press("ArrowDown");
    }
    await wb.page.keyboard.press("Enter");
  };

  step("a review publishes the planted bug as a diagnostic; Fix with agent prompts; Dismiss removes it", async () => {
    git("init", "-q");
    git("add", "-A");
    git("commit", "-qm", "first");
    fs.writeFileSync(path.join(wb.ws, "stats.py"), PLANTED);
    await wb.fake.setScript({
      turns: [
        { tool_calls: [{ name: "report_finding", input: { path: "stats.py", line: 3, severity: "error", message: MESSAGE } }] },
        { text: "One bug: the divisor." },
        { text: "Fixed the divisor." },
      ],
    });
    await openFile(wb.page, "stats.py");
    const editor = wb.page.locator(".editor-group-container.active .monaco-editor");
    await editor.locator(".view-line", { hasText: "len(values) - 1" }).first().waitFor();

    await runCommand(wb.page, "LSP Agent: Review My Changes…");
    await wb.page.locator(".quick-input-list .monaco-list-row", { hasText: "Uncommitted changes" }).first().waitFor();
    await wb.page.keyboard.press("Enter");
    await editor.locator(".squiggly-error").first().waitFor({ timeout: 60_000 });
    const sent = JSON.stringify((await wb.fake.modelRequests())[0].body.messages);
    assert.ok(sent.includes("+    return total / (len(values) - 1)"), "the real diff reached the model");

    // the squiggle is on line 3: hovering the line shows the finding's message
    await editor.locator(".view-line", { hasText: "len(values) - 1" }).first().click();
    await wb.page.keyboard.press("End");
    const before = (await wb.fake.modelRequests()).length;
    await quickFix("Fix with agent");
    const fixPrompt = await until("the fix's prompt", async () => (await wb.fake.modelRequests()).slice(before)[0], 30_000);
    assert.ok(JSON.stringify(fixPrompt.body.messages).includes(MESSAGE), "the prompt names the finding");
    assert.ok(JSON.stringify(fixPrompt.body.messages).includes("stats.py (line 3)"), "and its line");

    await editor.locator(".view-line", { hasText: "len(values) - 1" }).first().click();
    await quickFix("Dismiss");
    await until("the diagnostic dismissed", async () => (await editor.locator(".squiggly-error").count()) === 0, 30_000);
  });
});
