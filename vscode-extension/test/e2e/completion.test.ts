/**
 * Issue 36 in VS Code (code-server): with `lspAgent.completion.enabled` the server advertises
 * inline completion; typing shows the fake model's fill-in-the-middle answer as ghost text and
 * Tab accepts it (VS Code's own key, through vscode-languageclient); a next-edit suggestion
 * elsewhere in the file is drawn, the first Tab jumps to it, the second applies it; both accepts
 * reach the server as `agent/nextEdit/feedback` and are recorded in the folder's session, so the
 * agent's next turn is told.
 */
import assert from "node:assert/strict";
import { describe } from "node:test";
import { openFile, runCommand, screenshot, startWorkbench, workbenchSteps, until, type Workbench } from "./harness";

const CALC_PY = ["def area(width, height):", "    return width * height", "", "", "def report(w, h):", "    print(area(w, h))", ""].join("\n");
const GHOST = "rea(2, 3)";
const NEXT_NEW = "    print('area:', area(w, h))";
/** The completion model's answer to the next-edit question (its strict format): line 7 changes. */
const NEXT_ANSWER = `EDIT 7-7\n${NEXT_NEW}\nEND\nREASON: label the printed area\n`;
/** Served to the next-edit question only, whatever number of inline completions came before. */
const NEXT_EDIT = { prompt_contains: "predict the next edit", text: NEXT_ANSWER };
/** The texts of every message a model request carried. */
const texts = (x: unknown): string =>
  typeof x === "string" ? x : Array.isArray(x) ? x.map(texts).join("\n") : x && typeof x === "object" ? Object.values(x).map(texts).join("\n") : "";

describe("VS Code (code-server): inline completion and next-edit suggestions", { timeout: 240_000 }, () => {
  let wb: Workbench;
  const step = workbenchSteps("completion-", async () =>
    (wb = await startWorkbench(
      { "calc.py": CALC_PY },
      {
        "lspAgent.completion.enabled": true,
        // the completion model: an openai-compatible (fill-in-the-middle) one, served by the fake
        "lspAgent.config": { providers: { local: { type: "openai-compatible" } }, agents: { completion: { model: "local/fim-test" } } },
        "editor.minimap.enabled": false,
        "editor.stickyScroll.enabled": false,
      },
    )),
  );

  const page = () => wb.page;
  const web = () => wb.web;
  const editor = () => page().locator(".editor-group-container.active .monaco-editor").first();
  const line = (text: string) => editor().locator(".view-line", { hasText: text }).first();
  const cursorAt = () => page().locator("#status\\.editor\\.selection").textContent();
  /** The text of the editor's `after` decorations (drawn as CSS content, not DOM text). */
  const afterDecorations = () =>
    editor().evaluate((root) =>
      Array.from(root.querySelectorAll(".view-lines span"))
        .map((el) => getComputedStyle(el, "::after").content)
        .filter((c) => c && c !== "none" && c !== "normal"),
    );
  /** The fake's `/v1/completions` requests (the fill-in-the-middle model's). */
  const completionRequests = async () => (await wb.fake.modelRequests()).filter((r) => r.turn === "completion");

  step("a session exists in the folder, and the server advertised inline completion", async () => {
    await wb.fake.setScript({ turns: [{ text: "Ready." }] });
    await openFile(page(), "calc.py");
    await line("def report").waitFor();
    await runCommand(page(), "LSP Agent: Open Chat");
    await web().getByTestId("prompt-input").waitFor();
    await until("the server to run", async () => (await web().getByTestId("server-status").isHidden()) || undefined, 60000);
    await web().getByTestId("prompt-input").fill("get ready");
    await web().getByTestId("send-button").click();
    await web().getByTestId("message-assistant").filter({ hasText: "Ready." }).waitFor({ timeout: 60000 });
  });

  step("typing shows the model's answer as ghost text; Tab accepts it into the buffer", async () => {
    await wb.fake.setScript({ turns: [{ text: "Noted." }], completions: [{ text: GHOST }] });
    // a new line 3 (no auto-indent in these tests): type the start of a call
    await line("return width").click();
    await page().keyboard.press("End");
    await page().keyboard.press("Enter");
    await page().keyboard.type("x = a", { delay: 40 });
    await editor().locator(".ghost-text-decoration, .ghost-text").first().waitFor({ timeout: 30000 });
    assert.ok((await completionRequests()).length >= 1, "the fake served a /v1/completions request");
    await screenshot(page(), "completion-ghost-text.png");
    // from now on: no more ghost text (an empty completion), and the next-edit question's answer
    await wb.fake.setScript({ turns: [{ text: "Noted." }], completions: [{ text: "" }, NEXT_EDIT] });
    await page().keyboard.press("Tab");
    await line(`x = a${GHOST}`).waitFor();
  });

  step("after the edit pauses, a next-edit suggestion elsewhere is drawn; Tab jumps to it, Tab again applies it", async () => {
    // asked about 600 ms after the accept; drawn at line 7: the old text struck, the new beside it
    const shown = await until("the next-edit suggestion", async () => (await afterDecorations()).find((c) => c.includes("area:")), 30000);
    assert.match(shown, /'area:'/);
    await editor().locator(".cgmr").first().waitFor(); // the gutter mark
    assert.match((await cursorAt()) ?? "", /Ln 3,/);
    await screenshot(page(), "completion-next-edit.png");
    const question = (await completionRequests()).find((r) => String(r.body.prompt).includes("predict the next edit"));
    assert.ok(question, "the next-edit question reached the completion model");
    await page().keyboard.press("Tab");
    await until("the cursor on the suggestion", async () => /Ln 7,/.test((await cursorAt()) ?? ""), 10000);
    assert.equal(await editor().locator(".view-line", { hasText: "area:" }).count(), 0, "the first Tab only jumps");
    await page().keyboard.press("Tab");
    await line(NEXT_NEW).waitFor();
    await until("the suggestion gone", async () => !(await afterDecorations()).some((c) => c.includes("area:")), 10000);
    await line(`x = a${GHOST}`).waitFor(); // the rest of the buffer as it was
  });

  step("the server recorded both accepts in the session: the agent's next turn is told", async () => {
    const before = (await wb.fake.modelRequests()).filter((r) => r.turn !== "completion").length;
    await web().getByTestId("prompt-input").fill("what did I take?");
    await web().getByTestId("send-button").click();
    await web().getByTestId("message-assistant").filter({ hasText: "Noted." }).waitFor({ timeout: 60000 });
    const turn = (await wb.fake.modelRequests()).filter((r) => r.turn !== "completion").slice(before);
    const sent = texts(turn[0]?.body.messages);
    assert.match(sent, /The user accepted the inline completion at \S*calc\.py:3/);
    assert.match(sent, /The user accepted the suggested edit at \S*calc\.py:7/);
  });
});
