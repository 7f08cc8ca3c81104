/**
 * End to end (issue 35 §4): the panel's looks, checked from the DOM and kept as pictures. A
 * conversation with a plan, an edit (so Changes has a file row), a long command, a refused
 * command, an answer with a code block, a queued prompt and a provider error; then, at 300 px
 * and 600 px sidebar width, in the light, dark and high-contrast themes: nothing in the panel
 * overflows sideways (every element fits its box and the panel; only code blocks scroll; a
 * drop-down shows its whole choice), and a screenshot of the sidebar
 * (test-results/panel-<width>-<theme>.png, copied to docs/images/ by
 * `KEEP_PANEL_IMAGES=1`). Also: the working indicator shows during a turn (the fake LLM waits
 * before it answers), an error block shows on a provider error, each card's title names the
 * tool's action.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe } from "node:test";
import type { Page } from "playwright-core";
import { REPO_ROOT, openFile, runCommand, screenshot, settled, startWorkbench, until, workbenchSteps, type Workbench } from "./harness";

const THEMES: [string, string][] = [
  ["light", "Default Light Modern"],
  ["dark", "Default Dark Modern"],
  ["hc", "Default High Contrast"],
];
const WIDTHS = [300, 600];
const LONG_COMMAND = "python3 -c \"print('a command line far longer than the card is wide, with --many --options --that --go --on')\" && echo done";

/** Every element of the panel that sticks out sideways: its testid/class, and how. */
function overflowsInPanel(): string[] {
  const bad: string[] = [];
  const width = document.documentElement.clientWidth;
  const name = (el: Element) => `${el.tagName.toLowerCase()}${el.getAttribute("data-testid") ? `[${el.getAttribute("data-testid")}]` : ""}${el.className && typeof el.className === "string" ? `.${el.className.split(" ").join(".")}` : ""} "${(el.textContent ?? "").trim().slice(0, 40)}"`;
  for (const el of Array.from(document.querySelectorAll<HTMLElement>("#app *"))) {
    if (!el.getClientRects().length) continue; // not shown
    if (el.closest("pre") && el.tagName !== "PRE") continue; // a code block scrolls inside itself
    const style = getComputedStyle(el);
    const scrolls = el.tagName === "PRE" && /auto|scroll/.test(style.overflowX);
    if (el.scrollWidth > el.clientWidth + 1 && !scrolls && style.textOverflow !== "ellipsis") bad.push(`${name(el)}: scrollWidth ${el.scrollWidth} > clientWidth ${el.clientWidth}`);
    const box = el.getBoundingClientRect();
    if (box.width > 0 && (box.right > width + 1 || box.left < -1)) bad.push(`${name(el)}: spans ${Math.round(box.left)}–${Math.round(box.right)} of ${width} px`);
  }
  const canvas = document.createElement("canvas").getContext("2d")!;
  for (const select of Array.from(document.querySelectorAll<HTMLSelectElement>("#app select"))) {
    const choice = select.selectedOptions[0]?.textContent ?? "";
    canvas.font = getComputedStyle(select).font;
    const text = canvas.measureText(choice).width;
    // the closed drop-down's room for text: its box less the padding and the arrow (~20 px, measured)
    if (text > select.clientWidth - 20) bad.push(`${name(select)}: its choice "${choice}" (${Math.round(text)} px) is cut at ${select.clientWidth} px`);
  }
  return bad;
}

async function sidebarWidth(page: Page, want: number): Promise<void> {
  const sidebar = page.locator("#workbench\\.parts\\.sidebar");
  for (let attempt = 0; attempt < 4; attempt++) {
    const box = (await sidebar.boundingBox())!;
    if (Math.abs(box.width - want) <= 2) return;
    const y = box.y + box.height / 2;
    await page.mouse.move(box.x + box.width - 1, y);
    await page.mouse.down();
    await page.mouse.move(box.x + want - 1, y, { steps: 8 });
    await page.mouse.up();
    await page.waitForTimeout(300);
  }
  const box = (await sidebar.boundingBox())!;
  assert.ok(Math.abs(box.width - want) <= 2, `the sidebar is ${box.width} px wide, not ${want}`);
}

describe("VS Code: the panel at 300 and 600 px, light, dark and high contrast", { timeout: 600_000 }, () => {
  let wb: Workbench;
  const step = workbenchSteps("visual-", async () => (wb = await startWorkbench({ "a.py": "value = 1\n", "hello.py": "print('hello')\n" })));
  const web = () => wb.web;
  const state = () => web().getByTestId("session-state");
  const working = () => web().getByTestId("working-indicator");

  step("the panel opens empty: the prompt box starts a session, no '+ New' first", async () => {
    await openFile(wb.page, "a.py");
    await runCommand(wb.page, "LSP Agent: Open Chat");
    await web().getByTestId("prompt-input").waitFor();
    await until("the server to run", async () => (await web().getByTestId("server-status").isHidden()) || undefined, 30000);
    const empty = (await web().getByTestId("empty-state").textContent()) ?? "";
    assert.match(empty, /first prompt starts a session/);
    assert.doesNotMatch(empty, /New/);
    assert.equal(await working().getAttribute("data-active"), "false");
  });

  step("the working indicator shows during a turn, and goes when it ends", async () => {
    await wb.fake.setScript({ turns: [{ delay: 4, text: "Hello, slowly." }] });
    await web().getByTestId("prompt-input").fill("say hello");
    await web().getByTestId("send-button").click();
    await until("the working indicator", async () => (await working().getAttribute("data-active")) === "true", 15000);
    assert.equal(await working().getAttribute("role"), "status");
    assert.equal((await web().getByTestId("working-text").textContent())?.trim(), "Working…");
    assert.equal(await working().locator(".spinner").isVisible(), true);
    await web().getByTestId("message-assistant").filter({ hasText: "Hello, slowly." }).waitFor();
    await until("the session to be idle", async () => (await state().textContent()) === "idle");
    assert.equal(await working().getAttribute("data-active"), "false");
  });

  step("a turn with a plan, an edit, a long command and a code block: each card's title names the tool's action", async () => {
    const file = path.join(wb.ws, "a.py");
    await wb.fake.setScript({
      turns: [
        { tool_calls: [{ name: "todowrite", input: { todos: [{ content: "Change value", status: "completed" }, { content: "Run it", status: "in_progress" }] } }] },
        { tool_calls: [{ name: "edit", input: { file_path: file, old_string: "value = 1", new_string: "value = 2" } }] },
        { tool_calls: [{ name: "bash", input: { command: LONG_COMMAND, description: "Print a long greeting" } }] },
        { text: "Done. The code:\n\n```python\nvalue = 2  # a comment long enough to run past the edge of a narrow sidebar for sure\nprint(value)\n```\n" },
      ],
    });
    await web().getByTestId("prompt-input").fill("change the value and run it");
    await web().getByTestId("send-button").click();
    // allow each ask (the edit of an open file may ask too); the command's says the command once
    const done = web().getByTestId("message-assistant").filter({ hasText: "Done. The code:" });
    let commandAsks = 0;
    await until(
      "the turn to end, every ask allowed",
      async () => {
        if (await done.count()) return true;
        const card = web().getByTestId("permission-card").first();
        if (!(await card.count())) return false;
        const key = (await card.getAttribute("data-key")) ?? "";
        if ((await card.getAttribute("data-permission")) === "bash") {
          commandAsks++;
          assert.equal(((await card.textContent()) ?? "").split(LONG_COMMAND).length - 1, 1, "the command once");
        }
        await card.getByTestId("permission-allow-once").click();
        await web().locator(`[data-testid="permission-card"][data-key="${key}"]`).waitFor({ state: "detached" });
        return false;
      },
      90000,
    );
    assert.equal(commandAsks, 1);
    await until("the session to be idle", async () => (await state().textContent()) === "idle");

    const cards = web().getByTestId("tool-call");
    const titles: [string, string][] = [];
    for (let i = 0; i < (await cards.count()); i++) {
      titles.push([(await cards.nth(i).getAttribute("data-tool-name")) ?? "", ((await cards.nth(i).getByTestId("tool-call-title").textContent()) ?? "").trim()]);
    }
    assert.deepEqual(titles.map(([tool]) => tool), ["todowrite", "edit", "bash"]);
    for (const [tool, title] of titles) assert.notEqual(title.toLowerCase(), tool, `the ${tool} card is titled by its name, not its action`);
    assert.match(titles[1][1], /a\.py/);
    assert.match(titles[2][1], /Print a long greeting|python3/);
    await web().getByTestId("message-assistant").getByTestId("code-copy").first().waitFor();
    await web().getByTestId("changes").waitFor();
    await web().getByTestId("change-file-undo").waitFor();
  });

  step("a refused command is 'refused', not a red failure", async () => {
    await wb.fake.setScript({ turns: [{ tool_calls: [{ name: "bash", input: { command: "rm -rf build", description: "Remove the build folder" } }] }, { text: "Left it." }] });
    await web().getByTestId("prompt-input").fill("clean up");
    await web().getByTestId("send-button").click();
    const card = web().getByTestId("permission-card");
    await card.waitFor();
    await card.getByTestId("permission-deny-with-reason").click();
    await card.getByTestId("permission-reason-input").fill("keep the build");
    await card.getByTestId("permission-deny-with-reason-submit").click();
    const refused = web().locator('[data-testid="tool-call"][data-tool-name="bash"][data-status="failed"]');
    await refused.waitFor();
    assert.equal((await refused.getByTestId("tool-call-status").textContent())?.trim(), "refused");
    assert.equal(await refused.getByTestId("tool-call-status").getAttribute("data-tone"), "neutral");
    await until("the session to be idle", async () => (await state().textContent()) === "idle");
  });

  step("a prompt typed during a turn is scrolled into view and 'Queued' until the turn reads it", async () => {
    await wb.fake.setScript({ turns: [{ delay: 4, text: "First answer." }, { text: "Second answer." }] });
    await web().getByTestId("prompt-input").fill("first");
    await web().getByTestId("send-button").click();
    await until("the turn to run", async () => (await working().getAttribute("data-active")) === "true", 15000);
    // read back up the conversation, then send: the sent prompt is scrolled into view
    await web().getByTestId("transcript").evaluate((t) => (t.scrollTop = 0));
    await web().getByTestId("prompt-input").fill("second, while it works");
    await web().getByTestId("send-button").click();
    const queued = web().getByTestId("message-user").filter({ hasText: "second, while it works" });
    await queued.getByTestId("message-queued").waitFor();
    const inView = () =>
      queued.evaluate((el) => {
        const box = el.getBoundingClientRect();
        const view = el.closest("main")!.getBoundingClientRect();
        return box.top >= view.top - 1 && box.bottom <= view.bottom + 1;
      });
    await until("the sent prompt in view", inView, 5000);
    assert.equal(await queued.getAttribute("data-state"), "admitted");
    await web().getByTestId("message-assistant").filter({ hasText: "Second answer." }).waitFor();
    assert.equal(await queued.getByTestId("message-queued").count(), 0);
    await until("the session to be idle", async () => (await state().textContent()) === "idle");
  });

  step("a provider error shows an error block", async () => {
    await wb.fake.setScript({ turns: [{ error: "auth" }] });
    await web().getByTestId("prompt-input").fill("once more");
    await web().getByTestId("send-button").click();
    const error = web().getByTestId("turn-error");
    await error.waitFor();
    assert.match((await error.getByTestId("turn-error-message").textContent()) ?? "", /401/);
    assert.equal(await error.getAttribute("role"), "alert");
    await until("the session to be idle", async () => (await state().textContent())?.startsWith("idle"));
  });

  step("every control is reached with Tab and shows where the focus is", async () => {
    // from the first control of the page to the last (the next Tab leaves the page)
    await web().getByTestId("sessions-select").focus();
    const reached = new Set<string>(["sessions-select"]);
    const unringed: string[] = [];
    for (let i = 0; i < 120; i++) {
      await wb.page.keyboard.press("Tab");
      const focused = await web().locator("body").evaluate(() => {
        const el = document.activeElement as HTMLElement | null;
        if (!el || el === document.body) return undefined;
        const style = getComputedStyle(el);
        const ring = style.outlineStyle !== "none" && parseFloat(style.outlineWidth) > 0;
        return { id: el.getAttribute("data-testid") ?? `${el.tagName.toLowerCase()}.${el.className}`, ring };
      });
      if (!focused) break; // past the last control: the focus left the page
      reached.add(focused.id);
      if (!focused.ring) unringed.push(focused.id);
    }
    for (const id of ["sessions-select", "new-session-button", "search-sessions-button", "transcript", "rewind-button", "code-copy", "turn-error-retry", "changes-keep-all", "change-file-undo", "change-hunk-undo", "mode-select", "model-select", "prompt-input", "send-button", "undo-button"]) {
      assert.ok(reached.has(id), `Tab never reached ${id} (reached: ${[...reached].join(", ")})`);
    }
    assert.deepEqual([...new Set(unringed)], [], "focused without a visible focus ring");
  });

  for (const [theme, themeName] of THEMES) {
    step(`${theme}: at 300 and 600 px nothing overflows sideways; screenshots`, async () => {
      await wb.setSettings({ "workbench.colorTheme": themeName });
      const kind = theme === "hc" ? "vscode-high-contrast" : theme === "light" ? "vscode-light" : "vscode-dark";
      await until(`the ${themeName} theme in the panel`, async () => (await web().locator("body").getAttribute("class"))?.includes(kind), 20000);
      for (const width of WIDTHS) {
        await sidebarWidth(wb.page, width);
        await web().getByTestId("transcript").evaluate((t) => (t.scrollTop = t.scrollHeight));
        await settled(wb.page);
        const bad = await web().locator("body").evaluate(overflowsInPanel);
        const file = await screenshot(wb.page, `panel-${width}-${theme}.png`, "#workbench\\.parts\\.sidebar");
        if (process.env.KEEP_PANEL_IMAGES) fs.copyFileSync(file, path.join(REPO_ROOT, "docs/images", path.basename(file)));
        assert.deepEqual(bad, [], `at ${width} px in ${themeName}: ${bad.join("; ")}`);
      }
    });
  }
});
