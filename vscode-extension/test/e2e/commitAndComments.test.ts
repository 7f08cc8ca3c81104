/**
 * Issue 37 in VS Code (code-server): the Source Control view's "Write Commit Message" button fills
 * the git message box with the agent's message for the staged changes (Conventional Commits, as
 * the history), and a comment typed in a hunk's comment box in the Changes list opens the next
 * prompt the model gets.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe } from "node:test";
import { openFile, runCommand, startWorkbench, workbenchSteps, until, type Workbench } from "./harness";

const A_PY = "alpha = 1\nbeta = 2\n";
const git = (ws: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=T", "-c", "user.email=t@example.invalid", ...args], { cwd: ws, encoding: "utf8" });

describe("VS Code (code-server): commit messages and comments per hunk", { timeout: 240_000 }, () => {
  let wb: Workbench;
  const step = workbenchSteps(
    "commit-",
    async () =>
      (wb = await startWorkbench({ "a.py": A_PY }, { "lspAgent.config": { permission: { edit: "allow" } } }, (ws) => {
        git(ws, "init", "-q", "-b", "main");
        for (const subject of ["feat: start", "fix(io): flush", "docs: readme"]) {
          fs.writeFileSync(path.join(ws, "notes.txt"), subject);
          git(ws, "add", "notes.txt", "a.py");
          git(ws, "commit", "-q", "-m", subject);
        }
        fs.writeFileSync(path.join(ws, "greet.py"), "print('hello')\n");
        git(ws, "add", "greet.py");
      })),
  );
  const web = () => wb.web;

  step("the panel opens and the server starts", async () => {
    await openFile(wb.page, "a.py");
    await runCommand(wb.page, "LSP Agent: Open Chat");
    await web().getByTestId("prompt-input").waitFor();
    await until("the server to run", async () => (await web().getByTestId("server-status").isHidden()) || undefined, 30000);
  });

  step("the Source Control button fills the message box with a Conventional Commit for the staged diff", async () => {
    await wb.fake.setScript({ side_requests_use_script: true, turns: [{ text: "feat(greet): say hello" }] });
    await runCommand(wb.page, "Source Control: Focus on Changes View");
    const button = wb.page.locator('.action-label[aria-label="Write Commit Message"]').first();
    await button.waitFor({ timeout: 60000 }); // the Git extension finds the repository first
    await button.click();
    const input = wb.page.locator(".scm-view .monaco-editor .view-lines").first();
    // (the editor draws spaces as no-break spaces)
    await until("the message in the box", async () => ((await input.textContent()) ?? "").replace(/\u00a0/g, " ").includes("feat(greet): say hello"), 30000);
    const log: { body: any }[] = await (await fetch(`${wb.fake.baseUrl}/_log`)).json();
    const asked = JSON.stringify(log.at(-1)?.body);
    assert.match(asked, /print\('hello'\)/, "the staged diff was sent");
    assert.match(asked, /Conventional Commits/);
  });

  step("a comment typed in a hunk's box opens the next prompt", async () => {
    const file = path.join(wb.ws, "a.py");
    await wb.fake.setScript({
      turns: [{ tool_calls: [{ name: "edit", input: { file_path: file, old_string: "beta = 2", new_string: "beta = 20" } }] }, { text: "Changed beta." }, { text: "Renamed." }],
    });
    await runCommand(wb.page, "LSP Agent: Open Chat");
    await web().getByTestId("prompt-input").fill("make beta 20");
    await web().getByTestId("send-button").click();
    await web().getByTestId("message-assistant").filter({ hasText: "Changed beta." }).waitFor();
    const hunk = web().getByTestId("change-hunk").first();
    await hunk.waitFor();
    await hunk.getByTestId("change-hunk-comment").click();
    await web().getByTestId("change-comment-input").fill("call it BETA");
    await web().getByTestId("change-comment-add").click();
    await web().getByTestId("change-comment").filter({ hasText: "call it BETA" }).waitFor();
    await web().getByTestId("changes-send-comments").filter({ hasText: "Send comments (1)" }).waitFor();

    await web().getByTestId("prompt-input").fill("go on");
    await web().getByTestId("send-button").click();
    await web().getByTestId("message-assistant").filter({ hasText: "Renamed." }).waitFor();
    const requests = await wb.fake.modelRequests();
    const last = requests.at(-1)!.body.messages.filter((m: any) => m.role === "user").at(-1);
    const text = (typeof last.content === "string" ? [{ type: "text", text: last.content }] : last.content)
      .filter((b: any) => b.type === "text")
      .map((b: any) => b.text)
      .join("\n");
    assert.ok(text.startsWith("My comments on your changes:"), text);
    assert.ok(text.includes("a.py:2\n```\nbeta = 20\n```\nComment: call it BETA"), text);
    assert.ok(text.includes("go on"), text);
    await web().locator('[data-testid="change-comment"][data-sent="true"]').waitFor();
  });
});
