/**
 * Issue 35's host-side points in VS Code (code-server): Search Sessions highlights the typed word
 * in each hit's snippet (not in the session's title) and shows each hit's own time; the undo
 * buttons are named apart; a new session asks before it takes the shown session's pending
 * changes out of view, and they stay reachable. Edits of notes.py are allowed without asking.
 */
import assert from "node:assert/strict";
import * as path from "node:path";
import { describe } from "node:test";
import { openFile, runCommand, startWorkbench, workbenchSteps, until, type Workbench } from "./harness";

const WORD = "zanzibarwalrus";

describe("VS Code (code-server): sessions, search and pending changes", { timeout: 240_000 }, () => {
  let wb: Workbench;
  const step = workbenchSteps(
    "sessions-",
    async () => (wb = await startWorkbench({ "notes.py": "alpha = 1\n" }, { "lspAgent.config": { permission: { edit: { "*notes.py": "allow" } } } })),
  );

  const web = () => wb.web;
  const state = () => web().getByTestId("session-state");
  const editor = () => wb.page.locator(".editor-group-container.active .monaco-editor").first();
  const lenses = () => editor().locator(".codelens-decoration");
  const rows = () => wb.page.locator(".quick-input-list .monaco-list-row");
  const send = async (text: string, answer: string) => {
    await web().getByTestId("prompt-input").fill(text);
    await web().getByTestId("send-button").click();
    await web().getByTestId("message-assistant").filter({ hasText: answer }).waitFor();
    await until("the session to be idle", async () => (await state().textContent()) === "idle");
  };

  step("the panel opens and the server starts", async () => {
    await openFile(wb.page, "notes.py");
    await runCommand(wb.page, "LSP Agent: Open Chat");
    await web().getByTestId("prompt-input").waitFor();
    await until("the server to run", async () => (await web().getByTestId("server-status").isHidden()) || undefined, 30000);
  });

  step("before any session the mode and model pickers hold the server's choices", async () => {
    assert.equal(await web().getByTestId("sessions-select").inputValue(), "", "no session yet");
    const mode = web().getByTestId("mode-select");
    await until("the modes", async () => (await mode.locator("option").allTextContents()).join(",") === "Build,Plan", 20000);
    assert.equal(await mode.isEnabled(), true);
    assert.equal(await mode.inputValue(), "build");
    assert.equal(await web().getByTestId("model-select").inputValue(), "anthropic/claude-test");
  });

  step("Search Sessions: the word is highlighted in each hit's snippet, not the title, and each hit shows its own time", async () => {
    await wb.fake.setScript({ turns: [{ text: "Noted once." }, { text: "Noted twice." }] });
    await send(`remember the ${WORD} number one`, "Noted once.");
    // the second message is written in a later second than the first (the rows show seconds)
    const first = Date.now();
    await until("a later second", async () => Date.now() - first > 1500, 5000);
    await send(`and the ${WORD} number two`, "Noted twice.");

    await runCommand(wb.page, "LSP Agent: Search Sessions…");
    // typed only once the search's own box has the focus (not the palette's, nor the editor)
    await wb.page.locator(".quick-input-widget", { hasText: "LSP Agent: Search Sessions" }).waitFor();
    await until("the search box focused", () => wb.page.evaluate(() => document.activeElement?.closest(".quick-input-widget") !== null && (document.activeElement as HTMLInputElement).value === ""), 10000);
    await wb.page.keyboard.type(WORD);
    await until("two hits", async () => (await rows().count()) === 2 && (await rows().first().textContent())?.includes("number"), 20000);
    const descriptions: string[] = [];
    for (const i of [0, 1]) {
      const row = rows().nth(i);
      const label = row.locator(".label-name").first();
      assert.match((await label.textContent()) ?? "", new RegExp(`the ${WORD} number (one|two)`), "the row's label is the snippet");
      const lit = await label.locator(".highlight").allTextContents();
      assert.deepEqual(lit.map((t) => t.toLowerCase()), [WORD], "the typed word is highlighted in the snippet");
      // the row's second line is the session's title, never highlighted
      const meta = row.locator(".quick-input-list-label-meta");
      assert.equal((await meta.textContent())?.trim(), await web().getByTestId("sessions-select").locator("option:checked").textContent());
      assert.equal(await meta.locator(".highlight").count(), 0);
      descriptions.push((await row.locator(".label-description").textContent()) ?? "");
    }
    assert.ok(descriptions.every((d) => d.startsWith("you said · ")), descriptions.join(" | "));
    assert.notEqual(descriptions[0], descriptions[1], "each hit shows when its own message was written");
    await wb.page.keyboard.press("Escape");
  });

  step("the undo buttons are named apart: the CodeLens undoes one change, the palette rewinds the last prompt", async () => {
    const file = path.join(wb.ws, "notes.py");
    await wb.fake.setScript({
      turns: [{ tool_calls: [{ name: "edit", input: { file_path: file, old_string: "alpha = 1", new_string: "alpha = 100" } }] }, { text: "Changed alpha." }],
    });
    await send("make alpha 100", "Changed alpha.");
    await until("one CodeLens", async () => (await lenses().count()) === 1, 30000);
    assert.equal((await lenses().first().textContent())?.replace(/\s+/g, " ").trim(), "Keep change | Undo change | Comment…");
    // the palette names the prompt's undo for what it does
    await wb.page.keyboard.press("F1");
    await wb.page.locator(".quick-input-widget input").waitFor();
    await wb.page.keyboard.type("LSP Agent: Rewind Last Prompt");
    await rows().filter({ hasText: "LSP Agent: Rewind Last Prompt" }).first().waitFor();
    assert.equal(await rows().filter({ hasText: "Undo Last Prompt" }).count(), 0);
    await wb.page.keyboard.press("Escape");
    // the panel: the footer's button takes back the prompt, the Changes rows undo a change or a file
    assert.equal((await web().getByTestId("undo-button").textContent())?.trim(), "Rewind last prompt");
    const names = [
      (await web().getByTestId("undo-button").textContent())?.trim(),
      (await web().getByTestId("change-file-undo").textContent())?.trim(),
      (await lenses().first().locator("a", { hasText: "Undo" }).textContent())?.trim(),
    ];
    assert.equal(new Set(names).size, 3, `three undo buttons, three names: ${names.join(" | ")}`);
  });

  step("+ New asks while a change waits; Review Them Later starts one and Show Them brings the old session's marks back", async () => {
    const select = web().getByTestId("sessions-select");
    const oldSession = await select.inputValue();
    assert.ok(oldSession, "a session is shown");
    await web().getByTestId("new-session-button").click();
    const dialog = wb.page.locator(".monaco-dialog-box");
    await dialog.filter({ hasText: "1 change in 1 file wait for Keep or Undo" }).waitFor();
    await dialog.locator(".monaco-button", { hasText: "Review Them Later" }).click();
    // the new session is shown: the old one's CodeLens goes with it, and a notification offers the way back
    await until("the CodeLens to go", async () => (await lenses().count()) === 0, 30000);
    await until("another session shown", async () => (await select.inputValue()) !== oldSession, 10000);
    const toast = wb.page.locator(".notification-toast", { hasText: "1 change in 1 file" });
    await toast.waitFor();
    await toast.locator(".monaco-button", { hasText: "Show Them" }).click();
    await until("the CodeLens back", async () => (await lenses().count()) === 1, 30000);
    await web().getByTestId("change-hunk").filter({ hasText: "alpha = 100" }).waitFor();
    assert.equal(await select.inputValue(), oldSession);
  });

  step("Cancel starts nothing; Keep All, Then Start keeps the change and starts a session with nothing to review", async () => {
    await web().getByTestId("new-session-button").click();
    const dialog = wb.page.locator(".monaco-dialog-box");
    await dialog.filter({ hasText: "wait for Keep or Undo" }).waitFor();
    await dialog.locator(".monaco-button", { hasText: "Cancel" }).click();
    await dialog.waitFor({ state: "detached" });
    assert.equal(await lenses().count(), 1, "the session and its change are still shown");
    await web().getByTestId("new-session-button").click();
    await dialog.filter({ hasText: "wait for Keep or Undo" }).waitFor();
    await dialog.locator(".monaco-button", { hasText: "Keep All, Then Start" }).click();
    await until("the CodeLens to go", async () => (await lenses().count()) === 0, 30000);
    await editor().locator(".view-line", { hasText: "alpha = 100" }).waitFor();
    // nothing waits any more: the next + New asks nothing
    await web().getByTestId("new-session-button").click();
    await until("no dialog", async () => (await dialog.count()) === 0, 5000);
  });
});
