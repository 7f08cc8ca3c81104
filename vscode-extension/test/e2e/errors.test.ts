/**
 * End to end (issue 32 §5): a turn that fails is shown in the conversation, not only as the
 * state badge. The fake LLM refuses the key (401): the panel shows the server's message,
 * "authentication failed (401): check ANTHROPIC_API_KEY", with a Retry button; Retry sends the
 * prompt again and the answer comes. Screenshot: test-results/panel-turn-error.png. Then a
 * command that exits 3: its card says `exit 3` (the ask says the command once) and shows
 * the output open (test-results/panel-command-exit.png).
 */
import assert from "node:assert/strict";
import { describe } from "node:test";
import { openFile, runCommand, screenshot, startWorkbench, workbenchSteps, until, type Workbench } from "./harness";

describe("VS Code: a failed turn in the conversation", { timeout: 240_000 }, () => {
  let wb: Workbench;
  const step = workbenchSteps("errors-", async () => (wb = await startWorkbench({ "a.py": "value = 1\n" })));
  const web = () => wb.web;
  const state = () => web().getByTestId("session-state");

  step("the panel opens and the server starts", async () => {
    await openFile(wb.page, "a.py");
    await runCommand(wb.page, "LSP Agent: Open Chat");
    await web().getByTestId("prompt-input").waitFor();
    await until("the server to run", async () => (await web().getByTestId("server-status").isHidden()) || undefined, 30000);
  });

  step("a provider error shows its message with Retry; Retry sends the prompt again", async () => {
    await wb.fake.setScript({ turns: [{ error: "auth" }, { text: "Hello after the retry." }] });
    const before = (await wb.fake.modelRequests()).length;
    await web().getByTestId("prompt-input").fill("say hello");
    await web().getByTestId("send-button").click();

    const error = web().getByTestId("turn-error");
    await error.waitFor();
    const message = (await error.getByTestId("turn-error-message").textContent()) ?? "";
    assert.match(message, /401/);
    assert.match(message, /ANTHROPIC_API_KEY/);
    const retry = error.getByTestId("turn-error-retry");
    await retry.waitFor({ state: "visible" });
    await until("the session to be idle", async () => (await state().textContent())?.startsWith("idle"));
    await screenshot(wb.page, "panel-turn-error.png", "#workbench\\.parts\\.sidebar");

    await retry.click();
    await web().getByTestId("message-assistant").filter({ hasText: "Hello after the retry." }).waitFor();
    await until("the session to be idle", async () => (await state().textContent()) === "idle");
    const requests = (await wb.fake.modelRequests()).slice(before);
    assert.equal(requests.length, 2);
    assert.match(JSON.stringify(requests[1].body.messages.at(-1)), /say hello/);
    // the error stays where it happened; its Retry is gone once the conversation went on
    assert.equal(await error.count(), 1);
    await retry.waitFor({ state: "hidden" });
  });

  step("a command that exits non-zero shows its exit status and its output", async () => {
    await wb.fake.setScript({
      turns: [{ tool_calls: [{ name: "bash", input: { command: "echo tests-failed; exit 3", description: "Run the tests" } }] }, { text: "The tests fail." }],
    });
    await web().getByTestId("prompt-input").fill("run the tests");
    await web().getByTestId("send-button").click();
    const card = web().getByTestId("permission-card");
    await card.waitFor();
    // the ask says the command once (issue 35: it said it in the title, the description and the command line)
    assert.equal((await card.getByTestId("permission-command").textContent())?.trim(), "$ echo tests-failed; exit 3");
    assert.equal(((await card.textContent()) ?? "").split("echo tests-failed; exit 3").length - 1, 1);
    await card.getByTestId("permission-allow-once").click();
    const bash = web().locator('[data-testid="tool-call"][data-tool-name="bash"][data-status="completed"]');
    await bash.waitFor();
    assert.equal(await bash.getAttribute("data-exit-code"), "3");
    assert.equal(await bash.getByTestId("tool-call-status").textContent(), "exit 3");
    assert.match((await bash.getByTestId("tool-call-output").textContent()) ?? "", /tests-failed/);
    assert.equal(await bash.locator("details.output").getAttribute("open"), "");
    await web().getByTestId("message-assistant").filter({ hasText: "The tests fail." }).waitFor();
    await screenshot(wb.page, "panel-command-exit.png", "#workbench\\.parts\\.sidebar");
  });
});
