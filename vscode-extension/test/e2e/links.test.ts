/**
 * Issue 33 in VS Code (code-server): a `path:line` or `path:line:col` in the agent's answer is a
 * link; clicking it opens that file with the cursor on that line (and column).
 */
import assert from "node:assert/strict";
import { describe } from "node:test";
import { openFile, runCommand, startWorkbench, until, workbenchSteps, type Workbench } from "./harness";

const A_PY = Array.from({ length: 20 }, (_, i) => `line_${i + 1} = ${i + 1}\n`).join("");
const ANSWER = "The value is set at src/a.py:12, and `src/a.py:3:5` reads it. Port localhost:8080 is not a file.";

describe("VS Code (code-server): code references in answers open the file there", { timeout: 240_000 }, () => {
  let wb: Workbench;
  const step = workbenchSteps("links-", async () => (wb = await startWorkbench({ "src/a.py": A_PY, "README.md": "# links\n" }, { "editor.minimap.enabled": false })));
  const web = () => wb.web;
  const cursor = () => wb.page.locator("#status\\.editor\\.selection");

  step("the panel opens and the server starts", async () => {
    // the extension is active (its status item is up) before the palette is asked for its command
    await wb.page.locator(".statusbar-item", { hasText: "Agent:" }).waitFor({ timeout: 60000 });
    await openFile(wb.page, "README.md");
    await runCommand(wb.page, "LSP Agent: Open Chat");
    await web().getByTestId("prompt-input").waitFor();
    await until("the server to run", async () => (await web().getByTestId("server-status").isHidden()) || undefined, 30000);
  });

  step("the answer's references are links, and only they", async () => {
    await wb.fake.setScript({ turns: [{ text: ANSWER }] });
    await web().getByTestId("prompt-input").fill("where is the value set?");
    await web().getByTestId("send-button").click();
    const message = web().getByTestId("message-assistant").filter({ hasText: "localhost:8080" });
    await message.waitFor();
    await until("the turn to end", async () => (await web().getByTestId("session-state").textContent()) === "idle", 30000);
    const refs = message.getByTestId("code-ref");
    assert.deepEqual(await refs.allTextContents(), ["src/a.py:12", "src/a.py:3:5"]);
  });

  step("clicking src/a.py:12 opens a.py on line 12", async () => {
    await web().getByTestId("code-ref").filter({ hasText: "src/a.py:12" }).click();
    await wb.page.locator('.tab.active[data-resource-name="a.py"]').waitFor();
    await until("the cursor on line 12", async () => /Ln 12, Col 1\b/.test((await cursor().textContent()) ?? ""), 15000);
  });

  step("clicking src/a.py:3:5 moves to line 3, column 5", async () => {
    await web().getByTestId("code-ref").filter({ hasText: "src/a.py:3:5" }).click();
    await until("the cursor on line 3, column 5", async () => /Ln 3, Col 5\b/.test((await cursor().textContent()) ?? ""), 15000);
  });
});
