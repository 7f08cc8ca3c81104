/**
 * Issue 21 in VS Code (code-server): the agent's changes reviewed hunk by hunk (the panel's
 * Changes section, the editor's CodeLens "Keep change | Undo change" and gutter marks), an edited proposal is
 * what lands, and Rewind… takes back the code only. Edits of review.py are allowed without asking
 * (`lspAgent.config`); edits of proposal.py ask.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe } from "node:test";
import { openFile, runCommand, screenshot, settled, startWorkbench, workbenchSteps, until, type Workbench } from "./harness";

const lines = Array.from({ length: 30 }, (_, i) => `line_${String(i + 1).padStart(2, "0")} = ${i + 1}`);
lines[1] = "alpha = 1";
lines[27] = "omega = 1";
const REVIEW_PY = `${lines.join("\n")}\n`;
const PROPOSAL_PY = "answer = 1\n";
const USER_TAIL = "  # chosen by the user";

describe("VS Code (code-server): reviewing the agent's changes", { timeout: 240_000 }, () => {
  let wb: Workbench;
  const step = workbenchSteps(
    "review-",
    async () =>
      (wb = await startWorkbench(
        { "review.py": REVIEW_PY, "proposal.py": PROPOSAL_PY },
        // no diff editor's minimap or sticky scroll in the pictures
        { "lspAgent.config": { permission: { edit: { "*review.py": "allow" } } }, "editor.minimap.enabled": false, "editor.stickyScroll.enabled": false },
      )),
  );

  const web = () => wb.web;
  const state = () => web().getByTestId("session-state");
  const editor = () => wb.page.locator(".editor-group-container.active .monaco-editor").first();
  const editorLine = (text: string) => editor().locator(".view-line", { hasText: text }).first();
  const lenses = () => editor().locator(".codelens-decoration");
  const counts = async (testid = "changes-counts") => {
    const el = web().getByTestId(testid).first();
    return [await el.getAttribute("data-pending"), await el.getAttribute("data-kept"), await el.getAttribute("data-undone")].map(Number);
  };
  const untilCounts = (want: number[]) =>
    until(`the Changes counts to be ${want.join("/")}`, async () => JSON.stringify(await counts().catch(() => [])) === JSON.stringify(want), 30000);

  step("the panel opens on review.py and the server starts", async () => {
    await openFile(wb.page, "review.py");
    await editorLine("alpha = 1").waitFor();
    await runCommand(wb.page, "LSP Agent: Open Chat");
    await web().getByTestId("prompt-input").waitFor();
    await until("the server to run", async () => (await web().getByTestId("server-status").isHidden()) || undefined, 30000);
  });

  step("an auto-approved session edits review.py in two places: two pending hunks, each with Keep change | Undo change and a gutter mark", async () => {
    const file = path.join(wb.ws, "review.py");
    await wb.fake.setScript({
      turns: [
        {
          tool_calls: [
            { name: "edit", input: { file_path: file, old_string: "alpha = 1", new_string: "alpha = 100" } },
            { name: "edit", input: { file_path: file, old_string: "omega = 1", new_string: "omega = 100" } },
          ],
        },
        { text: "Changed alpha and omega." },
      ],
    });
    await web().getByTestId("prompt-input").fill("make alpha and omega 100");
    await web().getByTestId("send-button").click();
    await web().getByTestId("message-assistant").filter({ hasText: "Changed alpha and omega." }).waitFor();
    await until("the session to be idle", async () => (await state().textContent()) === "idle");
    assert.equal(await web().getByTestId("permission-card").count(), 0, "review.py edits are allowed without asking");

    // the panel's Changes section: one file, two pending hunks
    await web().getByTestId("changes").waitFor();
    await untilCounts([2, 0, 0]);
    const file0 = web().getByTestId("change-file");
    assert.equal(await file0.count(), 1);
    assert.equal(await file0.getAttribute("data-uri").then((u) => u?.endsWith("/review.py")), true);
    const hunks = web().getByTestId("change-hunk");
    assert.equal(await hunks.count(), 2);
    assert.match((await hunks.nth(0).textContent()) ?? "", /^2 alpha = 100\+1−1/);
    assert.match((await hunks.nth(1).textContent()) ?? "", /^28 omega = 100\+1−1/);

    // the editor: the edits are in the buffer, a CodeLens "Keep change | Undo change" above each, gutter marks on them
    await editorLine("alpha = 100").waitFor();
    await editorLine("omega = 100").waitFor();
    await until("two CodeLenses", async () => (await lenses().count()) === 2, 30000);
    for (const i of [0, 1]) assert.equal((await lenses().nth(i).textContent())?.replace(/\s+/g, " ").trim(), "Keep change | Undo change | Comment…");
    await until("the gutter marks", async () => (await editor().locator(".cgmr").count()) >= 2, 10000);
    await settled(wb.page); // the CodeLens fades in: the picture shows it done
    await screenshot(wb.page, "review-changes.png");
  });

  step("Undo on one CodeLens reverts that hunk in the editor, and the Changes section says so", async () => {
    await lenses().first().locator("a", { hasText: "Undo change" }).click();
    // ("alpha = 1" is also a part of "alpha = 100": wait for the new text to go)
    await until("alpha back to 1", async () => (await editor().locator(".view-line", { hasText: "alpha = 100" }).count()) === 0, 30000);
    await editorLine("alpha = 1").waitFor();
    await editorLine("omega = 100").waitFor();
    await untilCounts([1, 0, 1]);
    await web().locator('[data-testid="change-hunk"][data-status="undone"]').filter({ hasText: "alpha" }).waitFor();
    await until("one CodeLens left", async () => (await lenses().count()) === 1, 30000);
    // the edits and the undo went through the editor's buffer, and the disk followed it
    const expected = REVIEW_PY.replace("omega = 1\n", "omega = 100\n");
    await until("review.py on disk as in the editor", async () => fs.readFileSync(path.join(wb.ws, "review.py"), "utf8") === expected, 10000);
  });

  step("Keep on the other hunk in the panel clears its CodeLens", async () => {
    await web().locator('[data-testid="change-hunk"][data-status="pending"]').getByTestId("change-hunk-keep").click();
    await untilCounts([0, 1, 1]);
    await until("no CodeLens left", async () => (await lenses().count()) === 0, 30000);
    await editorLine("omega = 100").waitFor();
  });

  step("an edited proposal is what lands: the user's text from the diff's proposal side", async () => {
    const file = path.join(wb.ws, "proposal.py");
    await wb.fake.setScript({
      turns: [{ tool_calls: [{ name: "edit", input: { file_path: file, old_string: "answer = 1", new_string: "answer = 2" } }] }, { text: "Applied your version." }],
    });
    const before = (await wb.fake.modelRequests()).length;
    await web().getByTestId("prompt-input").fill("set answer to 2");
    await web().getByTestId("send-button").click();
    const card = web().getByTestId("permission-card");
    await card.waitFor();
    await card.getByTestId("permission-view-diff").click();
    const diff = wb.page.locator(".monaco-diff-editor");
    await diff.waitFor();
    await wb.page.locator(".tab.active", { hasText: "agent proposal" }).waitFor();
    const proposed = diff.locator(".editor.modified .view-line", { hasText: "answer = 2" });
    await proposed.waitFor();
    // the user changes the proposal in place
    await proposed.click();
    await wb.page.keyboard.press("End");
    await wb.page.keyboard.type(USER_TAIL);
    await diff.locator(".editor.modified .view-line", { hasText: `answer = 2${USER_TAIL}` }).waitFor();
    await wb.page.locator(".tab.active.dirty", { hasText: "agent proposal" }).waitFor();
    await settled(wb.page); // the diff editor's layout and decorations done, for the picture
    await screenshot(wb.page, "review-proposal.png");

    await card.getByTestId("permission-allow-once").click();
    await card.waitFor({ state: "detached" });
    await web().getByTestId("message-assistant").filter({ hasText: "Applied your version." }).waitFor();
    // answered: the diff closed without asking to save
    await wb.page.locator(".tab", { hasText: "agent proposal" }).waitFor({ state: "detached" });
    await web().locator('[data-testid="tool-call-permission"][data-modified="true"]').waitFor();

    // it is a pending hunk like any other: the Changes section lists proposal.py
    const proposalRow = web().locator('[data-testid="change-file"][data-uri$="/proposal.py"]');
    await proposalRow.waitFor();
    assert.equal(await web().getByTestId("change-file").count(), 2);
    // what landed is the user's text, in the editor's buffer: opened from the Changes section
    // (not quick open, whose list still has the closed diff)
    await proposalRow.getByTestId("change-file-open").click();
    await wb.page.locator('.tab.active[data-resource-name="proposal.py"]').waitFor();
    await editorLine(`answer = 2${USER_TAIL}`).waitFor();
    // the model was told: its tool result shows the user's change
    const requests = (await wb.fake.modelRequests()).slice(before);
    assert.equal(requests.length, 2);
    const toolResult = JSON.stringify(requests[1].body.messages.at(-1));
    assert.ok(toolResult.includes(USER_TAIL.trim()), `the user's text in the tool result: ${toolResult.slice(0, 600)}`);
  });

  step("Rewind… code only on the first prompt restores the files and keeps the conversation", async () => {
    const first = web().getByTestId("message-user").filter({ hasText: "make alpha and omega 100" });
    await first.hover();
    await first.getByTestId("rewind-button").click();
    await first.getByTestId("rewind-code").click();
    await web().getByTestId("notice").filter({ hasText: "Rewound the code" }).waitFor();
    await editorLine("answer = 1").waitFor();
    await wb.page.locator('.tab[data-resource-name="review.py"]').click();
    await wb.page.locator('.tab.active[data-resource-name="review.py"]').waitFor();
    await until("omega back to 1", async () => (await editor().locator(".view-line", { hasText: "omega = 100" }).count()) === 0, 30000);
    await editorLine("omega = 1").waitFor();
    // the conversation stays
    for (const text of ["make alpha and omega 100", "set answer to 2"]) await web().getByTestId("message-user").filter({ hasText: text }).waitFor({ state: "visible" });
    await web().getByTestId("message-assistant").filter({ hasText: "Applied your version." }).waitFor({ state: "visible" });
    // the rewound steps' hunks are no longer listed
    await web().getByTestId("changes").waitFor({ state: "hidden" });
  });
});
