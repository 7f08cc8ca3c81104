/**
 * Issue 37 §5 and §6 in VS Code (code-server): an image pasted into the prompt input reaches the
 * model as an image block (the fake LLM's request log) and shows in the sent message; the
 * "Until green" box keeps the agent working until its command passes, each check a notice.
 */
import assert from "node:assert/strict";
import { describe } from "node:test";
import { openFile, runCommand, startWorkbench, workbenchSteps, until, type Workbench } from "./harness";

/** A real 1×1 PNG. */
const PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";
// fails the first time it runs, passes the second: the agent need not change anything
const CHECK = "n=$(cat runs 2>/dev/null || echo 0); echo $((n + 1)) > runs; test $n -ge 1";

describe("VS Code (code-server): images and until green", { timeout: 240_000 }, () => {
  let wb: Workbench;
  const step = workbenchSteps("images-", async () => (wb = await startWorkbench({ "a.py": "x = 1\n" }, { "editor.minimap.enabled": false })));

  const web = () => wb.web;
  const input = () => web().getByTestId("prompt-input");
  const idle = () => until("the session to be idle", async () => (await web().getByTestId("session-state").textContent()) === "idle", 60000);

  step("the panel opens and the server starts", async () => {
    await openFile(wb.page, "a.py");
    await wb.page.locator(".monaco-editor .view-line", { hasText: "x = 1" }).first().waitFor();
    await runCommand(wb.page, "LSP Agent: Open Chat");
    await input().waitFor();
    await until("the server to run", async () => (await web().getByTestId("server-status").isHidden()) || undefined, 30000);
  });

  step("a pasted image waits as a chip, goes with the prompt as an image block and shows in the message", async () => {
    await input().evaluate((el, b64) => {
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const data = new DataTransfer();
      data.items.add(new File([bytes], "shot.png", { type: "image/png" }));
      el.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
    }, PNG_B64);
    await web().getByTestId("image-chip").filter({ hasText: "shot.png" }).waitFor();
    await wb.fake.setScript({ turns: [{ text: "A red dot." }] });
    const before = (await wb.fake.modelRequests()).length;
    await input().fill("what is in this screenshot?");
    await input().press("Enter");
    await web().getByTestId("message-assistant").filter({ hasText: "A red dot." }).waitFor();
    await idle();
    const [request] = (await wb.fake.modelRequests()).slice(before);
    const user = [...request.body.messages].reverse().find((m: any) => m.role === "user");
    const images = user.content.filter((b: any) => b.type === "image").map((b: any) => b.source);
    assert.deepEqual(images, [{ type: "base64", media_type: "image/png", data: PNG_B64 }]);
    assert.ok(JSON.stringify(user.content).includes("[image: shot.png (image/png, "), JSON.stringify(user.content).slice(0, 400));
    await web().getByTestId("message-user").filter({ hasText: "what is in this screenshot?" }).getByTestId("message-image").waitFor();
    await web().getByTestId("image-chips").waitFor({ state: "hidden" }); // sent: the chips are gone
  });

  step("Until green: the agent works until the command passes; each check is a notice", async () => {
    await web().getByTestId("until-toggle").check();
    await web().getByTestId("until-command").fill(CHECK);
    await wb.fake.setScript({ turns: [{ text: "First try." }, { text: "Second try." }] });
    const before = (await wb.fake.modelRequests()).length;
    await input().fill("make the check pass");
    await input().press("Enter");
    await web().getByTestId("notice").filter({ hasText: "attempt 2/5" }).filter({ hasText: "exited 0 ✓" }).waitFor({ timeout: 60000 });
    await web().getByTestId("notice").filter({ hasText: "attempt 1/5" }).filter({ hasText: "exited 1; the agent goes on" }).waitFor();
    await idle();
    const requests = (await wb.fake.modelRequests()).slice(before);
    assert.equal(requests.length, 2);
    assert.ok(JSON.stringify(requests[1].body.messages.at(-1)).includes("still fails after your turn (attempt 1 of 5)"));
  });
});
