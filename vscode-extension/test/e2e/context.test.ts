/**
 * Issue 22 in VS Code (code-server): the agent asks the editor's language servers
 * (`agent/editor/query` answered by VS Code's built-in TypeScript provider), the user's focus goes
 * with the prompt (the selection and its range; the chip removes it for one prompt), `@a.py`
 * completes and attaches the file, and the context gauge shows a percentage after an answer.
 * Each check reads what the model received: the fake LLM's request log.
 */
import assert from "node:assert/strict";
import * as path from "node:path";
import { describe } from "node:test";
import { openFile, runCommand, screenshot, startWorkbench, workbenchSteps, until, type Workbench } from "./harness";

const GREET_TS = "export function greet(name: string): string {\n  return `hello ${name}`;\n}\n";
// line 5 is a type error: its squiggle says the TypeScript server has loaded the project
const MAIN_TS = 'import { greet } from "./greet";\n\nconst message = greet("world");\nconsole.log(message);\nconst wrong: number = "not a number";\n';
const A_PY = "alpha = 1\nbeta = 2\ngamma = 3\n";

/** Every string inside a request's message (text blocks, tool results), joined. */
const texts = (x: unknown): string =>
  typeof x === "string" ? x : Array.isArray(x) ? x.map(texts).join("\n") : x && typeof x === "object" ? Object.values(x).map(texts).join("\n") : "";

describe("VS Code (code-server): the editor as the agent's context", { timeout: 240_000 }, () => {
  let wb: Workbench;
  const step = workbenchSteps("context-", async () => (wb = await startWorkbench({ "greet.ts": GREET_TS, "main.ts": MAIN_TS, "a.py": A_PY }, { "editor.minimap.enabled": false })));

  const web = () => wb.web;
  const editor = () => wb.page.locator(".editor-group-container.active .monaco-editor").first();
  const input = () => web().getByTestId("prompt-input");
  const idle = () => until("the session to be idle", async () => (await web().getByTestId("session-state").textContent()) === "idle", 30000);
  /** Sends a prompt and waits for the scripted answer; the model requests of that turn. */
  const turn = async (answer: string, send: () => Promise<void>) => {
    const before = (await wb.fake.modelRequests()).length;
    await send();
    await web().getByTestId("message-assistant").filter({ hasText: answer }).waitFor();
    await idle();
    return (await wb.fake.modelRequests()).slice(before);
  };
  /** The last user message of a request (the prompt with its context and attachments). */
  const lastUser = (request: { body: any }) => [...request.body.messages].reverse().find((m: any) => m.role === "user");

  step("the panel opens on main.ts, the TypeScript server is up and the server starts", async () => {
    await openFile(wb.page, "main.ts");
    await editor().locator(".view-line", { hasText: "const message" }).waitFor();
    await editor().locator(".squiggly-error").first().waitFor({ timeout: 90000 });
    await runCommand(wb.page, "LSP Agent: Open Chat");
    await input().waitFor();
    await until("the server to run", async () => (await web().getByTestId("server-status").isHidden()) || undefined, 30000);
  });

  step("definition: the model's tool call is answered by VS Code's TypeScript provider; the gauge shows a percentage", async () => {
    await wb.fake.setScript({
      turns: [
        { tool_calls: [{ name: "definition", input: { file_path: path.join(wb.ws, "main.ts"), line: 3, character: 17 } }] },
        { text: "greet is defined in greet.ts." },
      ],
    });
    const requests = await turn("greet is defined in greet.ts.", async () => {
      await input().fill("where is greet defined?");
      await web().getByTestId("send-button").click();
    });
    assert.equal(requests.length, 2);
    const tools = (requests[0].body.tools ?? []).map((t: { name: string }) => t.name);
    for (const name of ["definition", "references", "hover", "symbols"]) assert.ok(tools.includes(name), `${name} offered: ${tools.join(", ")}`);
    const result = texts(requests[1].body.messages.at(-1));
    // TypeScript's answer: greet.ts line 1, the name's column (17), with that line's text
    assert.match(result, /greet\.ts:1:17: export function greet\(name: string\): string \{/, result.slice(0, 600));
    await web().locator('[data-testid="tool-call"][data-tool-name="definition"][data-status="completed"]').waitFor();

    const gauge = web().getByTestId("context-gauge");
    await gauge.waitFor();
    const percent = Number(await gauge.getAttribute("data-percent"));
    assert.ok(Number.isInteger(percent) && percent >= 0 && percent <= 100, `a percentage: ${percent}`);
    assert.match((await web().getByTestId("context-gauge-text").textContent()) ?? "", /^\d+%/);
  });

  step("a prompt sent with a selection: the model gets the selected text and its range; the chip shows it", async () => {
    await openFile(wb.page, "a.py");
    const beta = editor().locator(".view-line", { hasText: "beta = 2" });
    await beta.click();
    await wb.page.keyboard.press("Home");
    await wb.page.keyboard.press("Shift+ArrowDown");
    await wb.page.keyboard.press("Shift+End");
    const chip = web().getByTestId("focus-chip");
    await chip.filter({ hasText: "a.py:2-3" }).waitFor();
    await wb.fake.setScript({ turns: [{ text: "Those are beta and gamma." }] });
    const requests = await turn("Those are beta and gamma.", async () => {
      await input().fill("what do these lines set?");
      await input().press("Enter");
    });
    const sent = texts(lastUser(requests[0]));
    assert.ok(sent.includes("beta = 2\ngamma = 3"), `the selected text: ${sent.slice(0, 600)}`);
    assert.ok(sent.includes("a.py:2-3"), `the selection's range: ${sent.slice(0, 600)}`);
    await screenshot(wb.page, "context-selection.png", "#workbench\\.parts\\.sidebar");
  });

  step("@a. completes to @a.py; the file's text reaches the model, the transcript shows a link; the chip removed, no focus", async () => {
    await input().click();
    await input().pressSequentially("summarize @a.");
    const item = web().locator('[data-testid="mention-item"][data-insert="@a.py"]');
    await item.waitFor();
    await input().press("Enter"); // accepts the first completion
    await until("the completion in the input", async () => (await input().inputValue()) === "summarize @a.py ");
    await web().getByTestId("mention-list").waitFor({ state: "hidden" });
    await web().getByTestId("focus-chip-remove").click();
    await web().getByTestId("focus-chip").waitFor({ state: "detached" });
    await wb.fake.setScript({ turns: [{ text: "a.py sets three names." }] });
    const requests = await turn("a.py sets three names.", async () => {
      await input().press("Enter");
    });
    const sent = texts(lastUser(requests[0]));
    assert.ok(sent.includes("alpha = 1"), `a.py's text attached: ${sent.slice(0, 800)}`);
    assert.ok(!sent.includes("Cursor:"), `no focus with the chip removed: ${sent.slice(0, 800)}`);
    const message = web().getByTestId("message-user").filter({ hasText: "summarize @a.py" });
    await message.locator('[data-testid="message-link"][data-uri$="/a.py"]').waitFor();
    // the chip is back for the next prompt
    await web().getByTestId("focus-chip").waitFor();
  });
});
