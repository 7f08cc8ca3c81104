/**
 * Issue 32 point 1 in VS Code (code-server): the agent edits a file open in an editor, then runs a
 * command that reads it — the command sees the edit, because the extension saved the document for
 * the agent (`agent/documents/save`); a document with the user's own unsaved change keeps it, is not
 * saved, and the model is told that commands see the disk's version.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe } from "node:test";
import { openFile, runCommand, screenshot, settled, startWorkbench, workbenchSteps, until, type Workbench } from "./harness";

const CALC_PY = "value = 1\n";

describe("VS Code (code-server): the agent's edits are on disk before its commands", { timeout: 240_000 }, () => {
  let wb: Workbench;
  const step = workbenchSteps("saving-", async () => (wb = await startWorkbench({ "calc.py": CALC_PY })));

  const web = () => wb.web;
  const state = () => web().getByTestId("session-state");
  const editor = () => wb.page.locator(".editor-group-container.active .monaco-editor").first();
  const editorLine = (text: string) => editor().locator(".view-line", { hasText: text }).first();
  const file = () => path.join(wb.ws, "calc.py");
  const calcTab = () => wb.page.locator('.tab[data-resource-name="calc.py"]');

  /** The model edits calc.py (`from` → `to`), then runs `cat calc.py`; both asks are allowed. The two tool results it was sent. */
  async function editThenCat(from: string, to: string, prompt: string): Promise<string[]> {
    await wb.fake.setScript({
      turns: [
        { tool_calls: [{ name: "edit", input: { file_path: file(), old_string: from, new_string: to } }] },
        { tool_calls: [{ name: "bash", input: { command: "cat calc.py", description: "Show the file" } }] },
        { text: "Shown." },
      ],
    });
    const before = (await wb.fake.modelRequests()).length;
    await web().getByTestId("prompt-input").fill(prompt);
    await web().getByTestId("send-button").click();
    for (const permission of ["edit", "bash"]) {
      const card = web().locator(`[data-testid="permission-card"][data-permission="${permission}"]`);
      await card.waitFor();
      await card.getByTestId("permission-allow-once").click();
      await card.waitFor({ state: "detached" });
    }
    await web().getByTestId("message-assistant").filter({ hasText: "Shown." }).waitFor();
    await until("the session to be idle", async () => (await state().textContent()) === "idle");
    const requests = (await wb.fake.modelRequests()).slice(before);
    assert.equal(requests.length, 3);
    return requests[2].body.messages
      .flatMap((m: { content: unknown }) => (Array.isArray(m.content) ? m.content : []))
      .filter((b: { type?: string }) => b.type === "tool_result")
      .map((b: unknown) => JSON.stringify(b))
      .slice(-2); // this turn's: the session's earlier turns come first
  }

  step("calc.py is open and the server runs", async () => {
    await openFile(wb.page, "calc.py");
    await editorLine("value = 1").waitFor();
    await runCommand(wb.page, "LSP Agent: Open Chat");
    await web().getByTestId("prompt-input").waitFor();
    await until("the server to run", async () => (await web().getByTestId("server-status").isHidden()) || undefined, 30000);
  });

  step("a command after the agent's edit of the open file sees the edit; the editor is saved", async () => {
    const [edited, shown] = await editThenCat("value = 1", "value = 2", "fix it, then show the file");
    assert.match(shown, /value = 2/, `the command's output: ${shown.slice(0, 400)}`);
    assert.doesNotMatch(edited, /Note on/);
    assert.equal(fs.readFileSync(file(), "utf8"), "value = 2\n");
    await openFile(wb.page, "calc.py");
    await editorLine("value = 2").waitFor();
    await until("the tab to be saved (not dirty)", async () => !((await calcTab().getAttribute("class")) ?? "").includes("dirty"));
  });

  step("a document with the user's own unsaved change keeps it, is not saved, and the model is told", async () => {
    await editorLine("value = 2").click();
    await wb.page.keyboard.press("Control+End");
    await wb.page.keyboard.type("mine = True");
    await editorLine("mine = True").waitFor();
    await wb.page.locator('.tab.dirty[data-resource-name="calc.py"]').waitFor();

    const [edited, shown] = await editThenCat("value = 2", "value = 3", "make it 3, then show the file");
    assert.match(edited, /unsaved changes of their own/, `the edit's result: ${edited.slice(0, 600)}`);
    assert.match(shown, /value = 2/);
    assert.doesNotMatch(shown, /mine/);
    assert.equal(fs.readFileSync(file(), "utf8"), "value = 2\n");
    await openFile(wb.page, "calc.py");
    await editorLine("value = 3").waitFor();
    await editorLine("mine = True").waitFor();
    await wb.page.locator('.tab.dirty[data-resource-name="calc.py"]').waitFor();
    await settled(wb.page);
    await screenshot(wb.page, "saving-unsaved-change-kept.png");
  });
});
