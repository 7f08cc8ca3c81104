/** The panel's state reducer: every `sessionUpdate` variant, and `seq` gaps and repeats. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ConfigOption, SessionUpdate } from "../../src/shared/protocol";
import { SESSION_UPDATE_KINDS } from "../../src/shared/protocol";
import {
  applyUpdate,
  canRetry,
  contextGauge,
  emptySession,
  initialChatState,
  reduceChat,
  retryPrompt,
  revertedFrom,
  stateLabel,
  usageLine,
  type ChatState,
  type SessionView,
  type ToolItem,
} from "../../src/shared/reducer";

const S = "ses_1";
const M = "msg_a1";

/** Applies updates with consecutive seqs after the session's last one. */
function play(session: SessionView, ...updates: SessionUpdate[]): SessionView {
  for (const update of updates) {
    const r = applyUpdate(session, { sessionId: session.sessionId, seq: session.lastSeq + 1, update });
    assert.equal(r.resync, undefined);
    session = r.session;
  }
  return session;
}

const fresh = () => emptySession(S);
const tool = (s: SessionView, id: string) => s.items.find((i): i is ToolItem => i.kind === "tool" && i.toolCallId === id);
const MODES: ConfigOption = {
  configId: "mode",
  name: "Mode",
  category: "mode",
  type: "select",
  currentValue: "plan",
  options: [{ value: "build", name: "Build" }, { value: "plan", name: "Plan" }],
};

describe("applyUpdate: each sessionUpdate variant", () => {
  const covered = new Set<string>();
  const variant = (name: SessionUpdate["sessionUpdate"], body: () => void) =>
    it(name, () => {
      covered.add(name);
      body();
    });

  variant("user_message", () => {
    const content = [{ type: "text" as const, text: "hi" }];
    let s = play(fresh(), { sessionUpdate: "user_message", messageId: "u1", content, state: "admitted" });
    assert.deepEqual(s.items, [{ kind: "user", id: "u:u1", messageId: "u1", content, state: "admitted" }]);
    s = play(s, { sessionUpdate: "user_message", messageId: "u1", content, state: "promoted" });
    assert.equal(s.items.length, 1, "admitted then promoted is one message");
    assert.equal(s.items[0].kind === "user" && s.items[0].state, "promoted");
  });

  it("user_message: a queued input moves to where its turn starts", () => {
    const text = (t: string) => [{ type: "text" as const, text: t }];
    const s = play(
      fresh(),
      { sessionUpdate: "user_message", messageId: "u1", content: text("first"), state: "promoted" },
      { sessionUpdate: "user_message", messageId: "u2", content: text("queued"), state: "admitted" },
      { sessionUpdate: "agent_message_chunk", messageId: M, text: "answer to first" },
      { sessionUpdate: "user_message", messageId: "u2", content: text("queued"), state: "promoted" },
    );
    assert.deepEqual(s.items.map((i) => i.id), ["u:u1", `t:${M}:0`, "u:u2"]);
  });

  variant("agent_message_chunk", () => {
    const s = play(fresh(), { sessionUpdate: "agent_message_chunk", messageId: M, text: "Hel" }, { sessionUpdate: "agent_message_chunk", messageId: M, text: "lo" });
    assert.deepEqual(s.items, [{ kind: "text", id: `t:${M}:0`, messageId: M, text: "Hello" }]);
  });

  variant("agent_thought_chunk", () => {
    const s = play(
      fresh(),
      { sessionUpdate: "agent_thought_chunk", messageId: M, text: "hmm" },
      { sessionUpdate: "agent_thought_chunk", messageId: M, text: "…" },
      { sessionUpdate: "agent_message_chunk", messageId: M, text: "answer" },
    );
    assert.deepEqual(s.items.map((i) => [i.kind, "text" in i ? i.text : ""]), [["reasoning", "hmm…"], ["text", "answer"]]);
  });

  it("text after a tool call starts a new part of the same message", () => {
    const s = play(
      fresh(),
      { sessionUpdate: "agent_message_chunk", messageId: M, text: "Reading." },
      { sessionUpdate: "tool_call_update", toolCallId: "t1", messageId: M, toolName: "read", status: "completed" },
      { sessionUpdate: "agent_message_chunk", messageId: M, text: "Done." },
    );
    assert.deepEqual(s.items.map((i) => i.id), [`t:${M}:0`, "t:t1", `t:${M}:2`]);
    assert.equal(new Set(s.items.map((i) => i.id)).size, 3, "ids are unique");
  });

  variant("agent_message_end", () => {
    let s = play(fresh(), { sessionUpdate: "agent_message_chunk", messageId: M, text: "x" });
    assert.equal(s.messageStatus[M], undefined);
    s = play(s, { sessionUpdate: "agent_message_end", messageId: M, status: "interrupted" });
    assert.equal(s.messageStatus[M], "interrupted");
  });

  variant("tool_call_update", () => {
    let s = play(fresh(), {
      sessionUpdate: "tool_call_update",
      toolCallId: "t1",
      messageId: M,
      toolName: "bash",
      title: "Run tests",
      kind: "execute",
      status: "pending",
      rawInput: { command: "pytest" },
    });
    s = play(s, { sessionUpdate: "tool_call_update", toolCallId: "t1", messageId: M, toolName: "bash", status: "in_progress", content: [{ type: "text", text: "..." }] });
    s = play(s, {
      sessionUpdate: "tool_call_update",
      toolCallId: "t1",
      messageId: M,
      toolName: "bash",
      status: "completed",
      content: [{ type: "text", text: "3 passed" }],
      locations: [{ uri: "file:///w/a.py" }],
    });
    const t = tool(s, "t1")!;
    assert.equal(s.items.length, 1, "an upsert by toolCallId");
    assert.equal(t.status, "completed");
    assert.equal(t.title, "Run tests", "merged: fields not sent again are kept");
    assert.equal(t.toolKind, "execute");
    assert.deepEqual(t.rawInput, { command: "pytest" });
    assert.deepEqual(t.content, [{ type: "text", text: "3 passed" }]);
    assert.deepEqual(t.locations, [{ uri: "file:///w/a.py" }]);
  });

  variant("plan_update", () => {
    const entries = [
      { content: "read", status: "completed" as const, priority: "high" as const },
      { content: "fix", status: "in_progress" as const, priority: "medium" as const },
    ];
    let s = play(fresh(), { sessionUpdate: "plan_update", entries });
    assert.deepEqual(s.plan, entries);
    s = play(s, { sessionUpdate: "plan_update", entries: [entries[1]] });
    assert.deepEqual(s.plan, [entries[1]], "the whole plan is replaced");
  });

  variant("state_update", () => {
    let s = play(fresh(), { sessionUpdate: "state_update", state: "running" });
    assert.equal(stateLabel(s), "running");
    s = play(s, { sessionUpdate: "state_update", state: "running", error: { message: "overloaded", retryable: true, retryAt: "2026-01-01T00:00:00Z" } });
    assert.equal(stateLabel(s), "retrying");
    s = play(s, { sessionUpdate: "state_update", state: "requires_action" });
    assert.equal(s.error, undefined);
    assert.equal(stateLabel(s), "needs your answer");
    s = play(s, { sessionUpdate: "state_update", state: "idle", stopReason: "cancelled" });
    assert.equal(s.state, "idle");
    assert.equal(stateLabel(s), "idle (cancelled)");
    s = play(s, { sessionUpdate: "state_update", state: "idle", stopReason: "end_turn" });
    assert.equal(stateLabel(s), "idle");
    const note = 'MCP server "db" could not start: FileNotFoundError';
    s = play(s, { sessionUpdate: "state_update", state: "running", notes: [note] });
    assert.deepEqual(
      s.items.filter((i) => i.kind === "notice").map((i) => (i as { text: string }).text),
      [note],
      "a state note is shown once, in the conversation",
    );
  });

  variant("usage_update", () => {
    const usage = { inputTokens: 1200, outputTokens: 340, cacheReadTokens: 0, cacheWriteTokens: 0, contextUsed: 1540, contextSize: 200000, cost: 0.0087 };
    const s = play(fresh(), { sessionUpdate: "usage_update", ...usage });
    assert.deepEqual(s.usage, usage);
    assert.equal(usageLine(s.usage), "context 1.5k/200.0k (1%) · in 1.2k · out 340 · $0.0087");
  });

  variant("config_option_update", () => {
    const s = play(fresh(), { sessionUpdate: "config_option_update", configOptions: [MODES] });
    assert.deepEqual(s.configOptions, [MODES]);
  });

  variant("session_info_update", () => {
    let s = play(fresh(), { sessionUpdate: "session_info_update", title: "", updatedAt: "t0" });
    assert.equal(s.title, "");
    s = play(s, { sessionUpdate: "session_info_update", title: "Fix the loop", updatedAt: "t1" });
    assert.equal(s.title, "Fix the loop");
  });

  variant("checkpoint_update", () => {
    const files = [{ path: "a.py", status: "modify", additions: 1, deletions: 1 }];
    const s = play(fresh(), { sessionUpdate: "checkpoint_update", checkpointId: "cp1", messageId: M, files, patch: "@@" });
    assert.deepEqual(s.checkpoints, [{ checkpointId: "cp1", messageId: M, files }]);
  });

  variant("revert_update", () => {
    const text = (t: string) => [{ type: "text" as const, text: t }];
    const files = [{ path: "a.py", status: "modify", additions: 1, deletions: 1 }];
    let s = play(
      fresh(),
      { sessionUpdate: "user_message", messageId: "u1", content: text("one"), state: "promoted" },
      { sessionUpdate: "agent_message_chunk", messageId: "m1", text: "first" },
      { sessionUpdate: "user_message", messageId: "u2", content: text("two"), state: "promoted" },
      { sessionUpdate: "agent_message_chunk", messageId: "m2", text: "second" },
    );
    assert.equal(revertedFrom(s), -1);
    // Undo: hidden from u2 on, not deleted
    s = play(s, { sessionUpdate: "revert_update", state: "staged", messageId: "u2", files });
    assert.deepEqual(s.revert, { state: "staged", messageId: "u2", files });
    assert.equal(revertedFrom(s), 2);
    assert.equal(s.items.length, 5);
    assert.equal(s.items.at(-1)?.kind, "notice");
    // Redo: all back
    s = play(s, { sessionUpdate: "revert_update", state: "cleared", messageId: "u2", files });
    assert.equal(s.revert, undefined);
    assert.equal(revertedFrom(s), -1);
    // committed: what was undone is gone
    s = play(s, { sessionUpdate: "revert_update", state: "staged", messageId: "u2", files }, { sessionUpdate: "revert_update", state: "committed", messageId: "u2", files });
    assert.deepEqual(s.items.map((i) => i.id), ["u:u1", "t:m1:0"]);
    assert.equal(s.revert, undefined);
  });

  it("revert_update with scope code: the files go back, no message is hidden or dropped", () => {
    const text = (t: string) => [{ type: "text" as const, text: t }];
    const files = [{ path: "a.py", status: "modify", additions: 1, deletions: 1 }];
    let s = play(
      fresh(),
      { sessionUpdate: "user_message", messageId: "u1", content: text("one"), state: "promoted" },
      { sessionUpdate: "agent_message_chunk", messageId: "m1", text: "first" },
    );
    s = play(s, { sessionUpdate: "revert_update", state: "staged", messageId: "u1", files, scope: "code" });
    assert.deepEqual(s.revert, { state: "staged", messageId: "u1", files, scope: "code" });
    assert.equal(revertedFrom(s), -1);
    assert.match((s.items.at(-1) as { text: string }).text, /Rewound the code: 1 file restored.*conversation stays/);
    // committed without a scope in the update: the staged one's scope counts
    s = play(s, { sessionUpdate: "revert_update", state: "committed", messageId: "u1", files: [] });
    assert.deepEqual(s.items.filter((i) => i.kind !== "notice").map((i) => i.id), ["u:u1", "t:m1:0"]);
    assert.equal(s.revert, undefined);
  });

  it("revert_update with scope conversation: the messages are hidden, then dropped", () => {
    const text = (t: string) => [{ type: "text" as const, text: t }];
    let s = play(
      fresh(),
      { sessionUpdate: "user_message", messageId: "u1", content: text("one"), state: "promoted" },
      { sessionUpdate: "user_message", messageId: "u2", content: text("two"), state: "promoted" },
    );
    s = play(s, { sessionUpdate: "revert_update", state: "staged", messageId: "u2", files: [], scope: "conversation" });
    assert.equal(revertedFrom(s), 1);
    assert.match((s.items.at(-1) as { text: string }).text, /Rewound the conversation.*files stay/);
    s = play(s, { sessionUpdate: "revert_update", state: "committed", messageId: "u2", files: [], scope: "conversation" });
    assert.deepEqual(s.items.map((i) => i.id), ["u:u1"]);
  });

  variant("review_update", () => {
    const files = [{ uri: "file:///w/a.py", status: "mixed" as const, pending: 1, kept: 0, undone: 1 }];
    assert.deepEqual(fresh().review, []);
    const s = play(fresh(), { sessionUpdate: "review_update", files });
    assert.deepEqual(s.review, files);
    assert.deepEqual(play(s, { sessionUpdate: "review_update", files: [] }).review, []);
  });

  variant("compaction_update", () => {
    let s = play(fresh(), { sessionUpdate: "compaction_update", phase: "started", auto: true });
    assert.equal(s.compacting, true);
    s = play(s, { sessionUpdate: "compaction_update", phase: "ended", auto: true });
    assert.equal(s.compacting, false);
    assert.deepEqual(s.items.map((i) => i.kind), ["notice", "notice"]);
    assert.equal(new Set(s.items.map((i) => i.id)).size, 2);
  });

  variant("permission_update", () => {
    let s = play(fresh(), { sessionUpdate: "permission_update", toolCallId: "t1", permission: "edit", state: "asked" });
    assert.equal(tool(s, "t1")?.permission?.state, "asked", "may come before the tool call's first update");
    s = play(
      s,
      { sessionUpdate: "tool_call_update", toolCallId: "t1", messageId: M, toolName: "edit", status: "pending" },
      { sessionUpdate: "permission_update", toolCallId: "t1", permission: "edit", state: "rejected", optionKind: "reject_once", reason: "use tabs" },
    );
    const t = tool(s, "t1")!;
    assert.equal(s.items.length, 1);
    assert.equal(t.toolName, "edit");
    assert.deepEqual(t.permission, { permission: "edit", state: "rejected", optionKind: "reject_once", reason: "use tabs" });
  });

  it("permission_update: an allow with the user's edit is marked modified", () => {
    const s = play(fresh(), { sessionUpdate: "permission_update", toolCallId: "t1", permission: "edit", state: "allowed", optionKind: "allow_once", modified: true });
    assert.equal(tool(s, "t1")?.permission?.modified, true);
  });

  variant("question_update", () => {
    const s = play(
      fresh(),
      { sessionUpdate: "tool_call_update", toolCallId: "q1", messageId: M, toolName: "question", status: "in_progress" },
      { sessionUpdate: "question_update", toolCallId: "q1", state: "answered" },
    );
    assert.deepEqual(tool(s, "q1")?.question, { state: "answered" });
  });

  variant("until_update", () => {
    const s = play(
      fresh(),
      { sessionUpdate: "until_update", command: "npm test", attempt: 1, maxAttempts: 5, verdict: "retry", exitCode: 1 },
      { sessionUpdate: "until_update", command: "npm test", attempt: 2, maxAttempts: 5, verdict: "passed", exitCode: 0 },
      { sessionUpdate: "until_update", command: "make", attempt: 3, maxAttempts: 3, verdict: "attempts", error: "stopped: timed out after 600 s" },
    );
    assert.deepEqual(
      s.items.map((i) => (i.kind === "notice" ? i.text : i.kind)),
      [
        "Until green — attempt 1/5: npm test exited 1; the agent goes on",
        "Until green — attempt 2/5: npm test exited 0 ✓",
        "Until green — attempt 3/3: make stopped: timed out after 600 s; no attempts left",
      ],
    );
  });

  variant("internal", () => {
    const before = fresh();
    const s = play(before, { sessionUpdate: "internal", type: "context_built" });
    assert.equal(s.lastSeq, 1, "counts for seq");
    assert.deepEqual({ ...s, lastSeq: 0 }, before, "and changes nothing else");
  });

  it("an unknown variant from a newer server is skipped but counted", () => {
    const s = play(fresh(), { sessionUpdate: "something_new" } as unknown as SessionUpdate);
    assert.equal(s.lastSeq, 1);
    assert.deepEqual(s.items, []);
  });

  it("covers every variant of the protocol", () => {
    assert.deepEqual([...covered].sort(), [...SESSION_UPDATE_KINDS].sort());
  });
});

describe("applyUpdate: seq", () => {
  const chunk = (text: string): SessionUpdate => ({ sessionUpdate: "agent_message_chunk", messageId: M, text });

  it("a gap is not applied and asks for a resync from the first missing seq", () => {
    const s = play(fresh(), chunk("a"), chunk("b"));
    const r = applyUpdate(s, { sessionId: S, seq: 5, update: chunk("e") });
    assert.deepEqual(r.resync, { fromSeq: 3 });
    assert.equal(r.session, s, "unchanged");
  });

  it("a repeat is not applied twice and asks for a resync", () => {
    const s = play(fresh(), chunk("a"), chunk("b"));
    const r = applyUpdate(s, { sessionId: S, seq: 2, update: chunk("b") });
    assert.deepEqual(r.resync, { fromSeq: 3 });
    assert.equal(r.session, s);
  });

  it("a session seen first in the middle resyncs from the start", () => {
    const r = applyUpdate(fresh(), { sessionId: S, seq: 7, update: chunk("x") });
    assert.deepEqual(r.resync, { fromSeq: 1 });
  });

  it("the replayed updates then apply in order", () => {
    let s = play(fresh(), chunk("a"));
    assert.ok(applyUpdate(s, { sessionId: S, seq: 3, update: chunk("c") }).resync);
    s = play(s, chunk("b"), chunk("c"));
    assert.equal(s.lastSeq, 3);
    assert.equal(s.items[0].kind === "text" && s.items[0].text, "abc");
  });

  it("an update of another session is ignored", () => {
    const s = fresh();
    const r = applyUpdate(s, { sessionId: "ses_other", seq: 1, update: chunk("x") });
    assert.equal(r.session, s);
    assert.equal(r.resync, undefined);
  });

  it("the reducer does not mutate its input", () => {
    const s = play(fresh(), chunk("a"));
    const frozen = JSON.stringify(s);
    play(s, chunk("b"), { sessionUpdate: "tool_call_update", toolCallId: "t", messageId: M, toolName: "read" });
    assert.equal(JSON.stringify(s), frozen);
  });
});

describe("reduceChat: the webview's state", () => {
  const withSession = (session: SessionView): ChatState => ({ ...initialChatState(), session });

  it("applies updates of the shown session", () => {
    const r = reduceChat(withSession(fresh()), { type: "update", params: { sessionId: S, seq: 1, update: { sessionUpdate: "state_update", state: "running" } } });
    assert.equal(r.resync, undefined);
    assert.equal(r.state.session?.state, "running");
  });

  it("a gap asks the host for the whole state", () => {
    const state = withSession(fresh());
    const r = reduceChat(state, { type: "update", params: { sessionId: S, seq: 2, update: { sessionUpdate: "internal", type: "x" } } });
    assert.equal(r.resync, true);
    assert.equal(r.state, state);
  });

  it("a repeat asks the host for the whole state", () => {
    const state = withSession(play(fresh(), { sessionUpdate: "internal", type: "x" }));
    const r = reduceChat(state, { type: "update", params: { sessionId: S, seq: 1, update: { sessionUpdate: "internal", type: "x" } } });
    assert.equal(r.resync, true);
  });

  it("ignores updates of other sessions", () => {
    const state = withSession(fresh());
    const r = reduceChat(state, { type: "update", params: { sessionId: "ses_2", seq: 9, update: { sessionUpdate: "internal", type: "x" } } });
    assert.equal(r.resync, undefined);
    assert.equal(r.state, state);
  });

  it("keeps the review list across state messages until a review message replaces it", () => {
    const review = { sessionId: S, files: [] };
    let state = reduceChat(initialChatState(), { type: "review", review }).state;
    assert.equal(state.review, review);
    state = reduceChat(state, { type: "state", state: withSession(fresh()) }).state;
    assert.equal(state.review, review);
    const other = { sessionId: S, files: [{ uri: "file:///w/a.py", status: "pending" as const, hunks: [] }] };
    state = reduceChat(state, { type: "state", state: { ...withSession(fresh()), review: other } }).state;
    assert.equal(state.review, other);
    state = reduceChat(state, { type: "review", review: undefined }).state;
    assert.equal(state.review, undefined);
  });

  it("replaces everything on a state message", () => {
    const next = withSession(play(fresh(), { sessionUpdate: "internal", type: "x" }));
    assert.equal(reduceChat(initialChatState(), { type: "state", state: next }).state, next);
  });

  it("tracks pending permission and question requests until done", () => {
    const params = { sessionId: S, toolCallId: "t1", title: "Edit a.py", permission: "edit", patterns: ["a.py"], options: [] };
    let state = reduceChat(initialChatState(), { type: "permission", request: { key: "p1", params } }).state;
    state = reduceChat(state, { type: "question", request: { key: "q1", params: { sessionId: S, toolCallId: "t2", questions: [] } } }).state;
    assert.deepEqual([state.permissions.length, state.questions.length], [1, 1]);
    state = reduceChat(state, { type: "requestDone", key: "p1" }).state;
    assert.deepEqual([state.permissions.length, state.questions.length], [0, 1]);
    state = reduceChat(state, { type: "requestDone", key: "q1" }).state;
    assert.deepEqual([state.permissions.length, state.questions.length], [0, 0]);
  });

  it("sessions, server status and drafts", () => {
    let state = reduceChat(initialChatState(), { type: "server", server: { status: "failed", message: "no python" } }).state;
    assert.deepEqual(state.server, { status: "failed", message: "no python" });
    state = reduceChat(state, { type: "sessions", sessions: [] }).state;
    state = reduceChat(state, { type: "draft", text: "again" }).state;
    state = reduceChat(state, { type: "draft", text: "again" }).state;
    assert.deepEqual(state.draft, { text: "again", nonce: 2 }, "each draft is new, even with the same text");
  });
});

describe("the context gauge", () => {
  const usage = { inputTokens: 1200, outputTokens: 340, cacheReadTokens: 0, cacheWriteTokens: 0, contextUsed: 50_000, contextSize: 200_000 };

  it("shows the share of the window and the session's cost; nothing before the first usage", () => {
    assert.equal(contextGauge(undefined), undefined);
    assert.equal(contextGauge({ ...usage, contextSize: 0 }), undefined, "an unknown window size");
    const g = contextGauge({ ...usage, cost: 0.0123 })!;
    assert.deepEqual([g.percent, g.label, g.compact], [25, "25% · $0.0123", false]);
    assert.match(g.title, /50\.0k of 200\.0k tokens; session cost \$0\.0123/);
    assert.equal(contextGauge(usage)!.label, "25%");
  });

  it("offers Compact now from 80 %", () => {
    assert.equal(contextGauge({ ...usage, contextUsed: 159_000 })!.compact, false);
    assert.equal(contextGauge({ ...usage, contextUsed: 160_000 })!.compact, true);
    assert.equal(contextGauge({ ...usage, contextUsed: 260_000 })!.percent, 100);
  });

  it("follows usage_update", () => {
    const s = applyUpdate(emptySession(S), { sessionId: S, seq: 1, update: { sessionUpdate: "usage_update", ...usage, contextUsed: 180_000 } }).session;
    assert.equal(contextGauge(s.usage)?.percent, 90);
  });
});

describe("reduceChat: focus and completions", () => {
  it("keeps the focus chip and the last completions; a whole state keeps the completions", () => {
    const focus = { label: "a.py:1-2", title: "a.py:1-2" };
    let state = reduceChat(initialChatState(), { type: "focus", focus }).state;
    assert.deepEqual(state.focus, focus);
    const items = [{ label: "#diff", insert: "#diff", block: { type: "mention" as const, name: "diff" as const } }];
    state = reduceChat(state, { type: "completions", id: 7, items }).state;
    assert.deepEqual(state.completions, { id: 7, items });
    state = reduceChat(state, { type: "state", state: { ...initialChatState(), focus } }).state;
    assert.deepEqual(state.completions, { id: 7, items });
    assert.equal(reduceChat(state, { type: "focus", focus: undefined }).state.focus, undefined);
  });
});

describe("a failed turn in the conversation", () => {
  const content = [
    { type: "text" as const, text: "fix the test" },
    { type: "resource_link" as const, uri: "file:///w/a.py", name: "a.py" },
    { type: "text" as const, text: "Editor context:\nActive file: a.py" },
  ];
  const failed = () =>
    play(
      fresh(),
      { sessionUpdate: "user_message", messageId: "u1", content, state: "promoted" },
      { sessionUpdate: "state_update", state: "running" },
      { sessionUpdate: "state_update", state: "idle", stopReason: "error", error: { message: "authentication failed (401): check ANTHROPIC_API_KEY", retryable: false } },
    );

  it("is an error item with the server's message, offering Retry", () => {
    const s = failed();
    const last = s.items[s.items.length - 1];
    assert.deepEqual(last, { kind: "error", id: "e:3", text: "authentication failed (401): check ANTHROPIC_API_KEY" });
    assert.equal(canRetry(s), true);
  });

  it("Retry sends the last prompt's text and mentions, without the old editor context", () => {
    assert.deepEqual(retryPrompt(failed()), { text: "fix the test", blocks: [content[1]] });
  });

  it("is not offered while a turn runs or once the conversation went on", () => {
    let s = play(failed(), { sessionUpdate: "state_update", state: "running" });
    assert.equal(canRetry(s), false);
    s = play(s, { sessionUpdate: "agent_message_chunk", messageId: "m2", text: "Hello" }, { sessionUpdate: "state_update", state: "idle", stopReason: "end_turn" });
    assert.equal(canRetry(s), false);
    assert.equal(s.items.filter((i) => i.kind === "error").length, 1, "the old error stays in the conversation");
  });

  it("a cancelled or finished turn is no error", () => {
    const s = play(fresh(), { sessionUpdate: "state_update", state: "idle", stopReason: "cancelled" });
    assert.equal(s.items.length, 0);
  });
});

describe("a command's exit status", () => {
  it("is kept on the tool item", () => {
    const s = play(
      fresh(),
      { sessionUpdate: "tool_call_update", toolCallId: "t1", messageId: M, toolName: "bash", status: "in_progress" },
      { sessionUpdate: "tool_call_update", toolCallId: "t1", messageId: M, toolName: "bash", status: "completed", exitCode: 3, content: [{ type: "text", text: "FAILED\n\nExit code: 3" }] },
    );
    assert.equal(tool(s, "t1")?.exitCode, 3);
    assert.equal(tool(s, "t1")?.status, "completed");
  });
});
