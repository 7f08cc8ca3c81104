/** The chat page's words for a state (src/webview/view.ts): card titles, badges, the working indicator, permission cards. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { RequestPermissionParams, SessionUpdate } from "../../src/shared/protocol";
import type { ConfigOption } from "../../src/shared/protocol";
import { applyUpdate, emptySession, initialChatState, type SessionView, type ToolItem, type UserItem } from "../../src/shared/reducer";
import { isQueued, permissionText, pickerOption, toolBadge, toolTitle, workingLabel } from "../../src/webview/view";

function apply(s: SessionView, ...updates: SessionUpdate[]): SessionView {
  for (const update of updates) s = applyUpdate(s, { sessionId: s.sessionId, seq: s.lastSeq + 1, update }).session;
  return s;
}
const tool = (s: SessionView) => s.items.find((i): i is ToolItem => i.kind === "tool")!;

describe("tool cards", () => {
  it("a pending card says the tool's action from the update's title, not its input", () => {
    const s = apply(emptySession("s1"), { sessionUpdate: "tool_call_update", toolCallId: "c1", messageId: "m1", toolName: "bash", kind: "execute", status: "pending", title: "Run python3 hello.py", rawInput: { command: "python3 hello.py" } });
    assert.equal(toolTitle(tool(s)), "Run python3 hello.py");
    assert.deepEqual(toolBadge(tool(s)), { label: "pending", tone: "running" });
  });

  it("without a title the card names the tool, whatever its input holds", () => {
    const s = apply(emptySession("s1"), { sessionUpdate: "tool_call_update", toolCallId: "c1", messageId: "m1", toolName: "edit", status: "pending", rawInput: { file_path: "src/app.py", command: "x" } });
    assert.equal(toolTitle(tool(s)), "edit");
  });

  it("a refused call is 'refused' and neutral, a failed one red", () => {
    const refused = apply(emptySession("s1"), { sessionUpdate: "tool_call_update", toolCallId: "c1", messageId: "m1", toolName: "bash", status: "failed", title: "Run rm -rf build", refused: true });
    assert.deepEqual(toolBadge(tool(refused)), { label: "refused", tone: "neutral" });
    const denied = apply(
      emptySession("s1"),
      { sessionUpdate: "tool_call_update", toolCallId: "c1", messageId: "m1", toolName: "bash", status: "pending", title: "Run ls" },
      { sessionUpdate: "permission_update", toolCallId: "c1", permission: "bash", state: "rejected" },
      { sessionUpdate: "tool_call_update", toolCallId: "c1", messageId: "m1", toolName: "bash", status: "failed" },
    );
    assert.deepEqual(toolBadge(tool(denied)), { label: "refused", tone: "neutral" });
    const failed = apply(emptySession("s1"), { sessionUpdate: "tool_call_update", toolCallId: "c1", messageId: "m1", toolName: "read", status: "failed", title: "Read a.py" });
    assert.deepEqual(toolBadge(tool(failed)), { label: "failed", tone: "error" });
  });

  it("a finished command says its exit status; non-zero is red", () => {
    const done = (exitCode: number) => apply(emptySession("s1"), { sessionUpdate: "tool_call_update", toolCallId: "c1", messageId: "m1", toolName: "bash", status: "completed", exitCode });
    assert.deepEqual(toolBadge(tool(done(0))), { label: "exit 0", tone: "ok" });
    assert.deepEqual(toolBadge(tool(done(3))), { label: "exit 3", tone: "error" });
  });
});

describe("the working indicator", () => {
  it("says Working… while a turn runs and nothing once it ends", () => {
    let s = emptySession("s1");
    assert.equal(workingLabel(undefined), undefined);
    assert.equal(workingLabel(s), undefined);
    s = apply(s, { sessionUpdate: "state_update", state: "running" });
    assert.equal(workingLabel(s), "Working…");
    s = apply(s, { sessionUpdate: "state_update", state: "requires_action" });
    assert.equal(workingLabel(s), "Waiting for your answer…");
    s = apply(s, { sessionUpdate: "state_update", state: "idle", stopReason: "end_turn" });
    assert.equal(workingLabel(s), undefined);
  });

  it("says what else runs: a compaction, a retry", () => {
    const running = apply(emptySession("s1"), { sessionUpdate: "state_update", state: "running" });
    assert.equal(workingLabel(apply(running, { sessionUpdate: "compaction_update", phase: "started", auto: true })), "Compacting the conversation…");
    assert.equal(workingLabel(apply(running, { sessionUpdate: "state_update", state: "running", error: { message: "overloaded", retryable: true, retryAt: "2026-01-01T00:00:00Z" } })), "Retrying…");
  });
});

describe("queued prompts", () => {
  it("a prompt is queued while admitted and joins the conversation when promoted", () => {
    const user = (s: SessionView) => s.items.find((i): i is UserItem => i.kind === "user")!;
    const content = [{ type: "text" as const, text: "and then?" }];
    let s = apply(emptySession("s1"), { sessionUpdate: "user_message", messageId: "u2", content, state: "admitted" });
    assert.equal(isQueued(user(s)), true);
    s = apply(s, { sessionUpdate: "user_message", messageId: "u2", content: [], state: "promoted" });
    assert.equal(isQueued(user(s)), false);
  });
});

describe("the mode and model pickers", () => {
  const model = (currentValue: string): ConfigOption => ({
    configId: "model",
    name: "Model",
    category: "model",
    type: "select",
    currentValue,
    options: [{ value: "anthropic/a", name: "anthropic/a" }, { value: "anthropic/b", name: "anthropic/b" }],
  });

  it("are filled before the first session from the server's choices, then from the session's", () => {
    const before = { ...initialChatState(), configOptions: [model("anthropic/a")] };
    assert.equal(pickerOption(before, "model")?.currentValue, "anthropic/a");
    assert.equal(pickerOption(before, "mode"), undefined);
    const during = { ...before, session: { ...emptySession("s1"), configOptions: [model("anthropic/b")] } };
    assert.equal(pickerOption(during, "model")?.currentValue, "anthropic/b");
  });
});

describe("permission cards", () => {
  const ask = (over: Partial<RequestPermissionParams>): RequestPermissionParams => ({
    sessionId: "s1",
    toolCallId: "c1",
    title: "Run: python3 hello.py",
    permission: "bash",
    patterns: [],
    options: [],
    ...over,
  });
  const occurrences = (said: object, needle: string) => JSON.stringify(said).split(needle).length - 1;

  it("a command ask says the command once, and the model's description when it adds something", () => {
    const said = permissionText(ask({ description: "Run hello.py", subject: { type: "command", command: "python3 hello.py", cwd: "/ws" } }));
    assert.equal(occurrences(said, "python3 hello.py"), 1);
    assert.deepEqual(said, { heading: "Run this command?", command: "python3 hello.py", description: "Run hello.py" });
    const bare = permissionText(ask({ description: "python3  hello.py", subject: { type: "command", command: "python3 hello.py", cwd: "/ws" } }));
    assert.deepEqual(bare, { heading: "Run this command?", command: "python3 hello.py" });
  });

  it("another ask is headed by its title, its description only when it differs", () => {
    assert.deepEqual(permissionText(ask({ title: "Edit src/app.py", description: "Edit src/app.py", permission: "edit" })), { heading: "Edit src/app.py" });
    assert.deepEqual(permissionText(ask({ title: "Fetch https://example.org", description: "the docs", permission: "webfetch" })), { heading: "Fetch https://example.org", description: "the docs" });
  });
});
