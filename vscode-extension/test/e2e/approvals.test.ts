/**
 * Issue 31 in VS Code (code-server): the permission card says exactly what "for session"/"always"
 * save (a wildcard the model wrote stays literal: `git c[*] *`), and "LSP Agent: Saved Approvals…"
 * lists the project's approval in a quick pick and revokes the one picked.
 */
import assert from "node:assert/strict";
import { describe } from "node:test";
import { openFile, runCommand, startWorkbench, workbenchSteps, until, type Workbench } from "./harness";

describe("VS Code (code-server): saved approvals", { timeout: 240_000 }, () => {
  let wb: Workbench;
  const step = workbenchSteps("approvals-", async () => (wb = await startWorkbench({ "a.py": "value = 1\n" })));
  const web = () => wb.web;
  const state = () => web().getByTestId("session-state");
  const notification = (text: string) => wb.page.locator(".notification-toast", { hasText: text }).first();

  step("the panel opens and the server starts", async () => {
    await openFile(wb.page, "a.py");
    await wb.page.locator(".monaco-editor .view-line", { hasText: "value = 1" }).first().waitFor();
    await runCommand(wb.page, "LSP Agent: Open Chat");
    await web().getByTestId("prompt-input").waitFor();
    await until("the server to run", async () => (await web().getByTestId("server-status").isHidden()) || undefined, 30000);
  });

  step("the card names the literal pattern; Always saves it for the project", async () => {
    await wb.fake.setScript({
      turns: [{ tool_calls: [{ name: "bash", input: { command: "git 'c*' --help" } }] }, { text: "Ran it." }],
    });
    await web().getByTestId("prompt-input").fill("run it");
    await web().getByTestId("send-button").click();
    const card = web().getByTestId("permission-card");
    await card.waitFor();
    assert.equal(await card.getByTestId("permission-saves").textContent(), '"for session"/"always" saves: bash git c[*] *');
    await card.getByTestId("permission-allow-always").click();
    await web().getByTestId("message-assistant").filter({ hasText: "Ran it." }).waitFor();
    await until("the session to be idle", async () => (await state().textContent()) === "idle");
  });

  step("Saved Approvals… lists it and revokes the one picked", async () => {
    await runCommand(wb.page, "LSP Agent: Saved Approvals");
    const row = wb.page.locator(".quick-input-list .monaco-list-row", { hasText: "bash: git c[*] *" }).first();
    await row.waitFor();
    assert.match((await row.textContent()) ?? "", /always, for this project/);
    await row.click(); // canPickMany: the click ticks the row
    await wb.page.keyboard.press("Enter");
    await notification("revoked 1 saved approval").waitFor();

    await runCommand(wb.page, "LSP Agent: Saved Approvals");
    await notification("no saved approvals for this workspace").waitFor();
  });
});
