/**
 * The chat state and the pure functions that build it from `agent/session/update`s.
 *
 * The extension host keeps one `SessionView` per session it follows and the webview keeps a copy of
 * the active one; both apply the same `applyUpdate`, so what the panel shows is a function of the
 * event stream. `seq` must grow by exactly one: a gap or a repeat is not applied and asks for a
 * resync (`agent/session/load` with `replay: {fromSeq: lastSeq + 1}`).
 */
import type { FocusChip } from "./focus";
import type { MentionItem, PickedMention, Trigger } from "./mentions";
import type { ReviewSnapshot } from "./review";
import type {
  CheckpointFile,
  ConfigOption,
  ContentBlock,
  Location,
  PlanEntry,
  RequestPermissionParams,
  ReviewFileCounts,
  RevertScope,
  RevertUpdate,
  AskQuestionParams,
  SessionState,
  SessionSummary,
  SessionUpdate,
  SessionUpdateParams,
  StopReason,
  ToolCallUpdate,
  ToolContent,
  ToolKind,
  ToolStatus,
  UntilUpdate,
  Usage,
} from "./protocol";

export interface UserItem { kind: "user"; id: string; messageId: string; content: ContentBlock[]; state: "admitted" | "promoted" }
export interface TextItem { kind: "text" | "reasoning"; id: string; messageId: string; text: string }
export interface ToolItem {
  kind: "tool";
  id: string;
  toolCallId: string;
  messageId: string;
  toolName: string;
  title?: string;
  toolKind?: ToolKind;
  status?: ToolStatus;
  rawInput?: unknown;
  content?: ToolContent[];
  locations?: Location[];
  exitCode?: number;
  /** The person or a rule refused it (`tool_call_update.refused`). */
  refused?: boolean;
  permission?: { permission: string; state: string; optionKind?: string; reason?: string; modified?: boolean };
  question?: { state: string };
}
export interface NoticeItem { kind: "notice"; id: string; text: string }
/** A turn that failed (a refused key, a provider error): shown in the conversation, with Retry. */
export interface ErrorItem { kind: "error"; id: string; text: string }
export type ChatItem = UserItem | TextItem | ToolItem | NoticeItem | ErrorItem;

export interface SessionView {
  sessionId: string;
  title: string;
  lastSeq: number;
  state: SessionState;
  stopReason?: StopReason;
  error?: { message: string; retryable: boolean; retryAt?: string };
  items: ChatItem[];
  /** How each assistant message ended (absent while it streams). */
  messageStatus: Record<string, "completed" | "interrupted" | "failed">;
  plan: PlanEntry[];
  usage?: Usage;
  configOptions: ConfigOption[];
  compacting: boolean;
  checkpoints: { checkpointId: string; messageId: string; files: CheckpointFile[] }[];
  revert?: { state: "staged" | "cleared" | "committed"; messageId?: string | null; files: CheckpointFile[]; scope?: RevertScope };
  /** The last `review_update`: every file of the session's review list with its counts. */
  review: ReviewFileCounts[];
}

export function emptySession(sessionId: string, title = ""): SessionView {
  return {
    sessionId,
    title,
    lastSeq: 0,
    state: "idle",
    items: [],
    messageStatus: {},
    plan: [],
    configOptions: [],
    compacting: false,
    checkpoints: [],
    review: [],
  };
}

export interface ApplyResult {
  session: SessionView;
  /** Set when the update was not applied: reload the session's events from this `seq`. */
  resync?: { fromSeq: number };
}

/** Applies one update; a `seq` that is not `lastSeq + 1` is left out and asks for a resync. */
export function applyUpdate(session: SessionView, params: SessionUpdateParams): ApplyResult {
  if (params.sessionId !== session.sessionId) return { session };
  if (params.seq !== session.lastSeq + 1) {
    return { session, resync: { fromSeq: session.lastSeq + 1 } };
  }
  const next = reduceUpdate(session, params.update);
  return { session: { ...next, lastSeq: params.seq } };
}

function reduceUpdate(s: SessionView, u: SessionUpdate): SessionView {
  switch (u.sessionUpdate) {
    case "user_message":
      return upsertUser(s, u.messageId, u.content, u.state);
    case "agent_message_chunk":
      return appendText(s, "text", u.messageId, u.text);
    case "agent_thought_chunk":
      return appendText(s, "reasoning", u.messageId, u.text);
    case "agent_message_end":
      return { ...s, messageStatus: { ...s.messageStatus, [u.messageId]: u.status } };
    case "tool_call_update":
      return upsertTool(s, u);
    case "plan_update":
      return { ...s, plan: u.entries };
    case "state_update": {
      const next = (u.notes ?? []).reduce(
        (view, note, i) => ({ ...view, items: [...view.items, { kind: "notice" as const, id: `n:${s.lastSeq + 1}:${i}`, text: note }] }),
        {
          ...s,
          state: u.state,
          stopReason: u.state === "idle" ? u.stopReason : undefined,
          error: u.error ?? undefined,
        },
      );
      if (u.state !== "idle" || u.stopReason !== "error" || !u.error) return next;
      // where the conversation is, not only in the state badge
      return { ...next, items: [...next.items, { kind: "error", id: `e:${s.lastSeq + 1}`, text: u.error.message }] };
    }
    case "usage_update": {
      const { sessionUpdate: _kind, ...usage } = u;
      return { ...s, usage };
    }
    case "config_option_update":
      return { ...s, configOptions: u.configOptions };
    case "session_info_update":
      return u.title ? { ...s, title: u.title } : s;
    case "checkpoint_update":
      return {
        ...s,
        checkpoints: [...s.checkpoints, { checkpointId: u.checkpointId, messageId: u.messageId, files: u.files }],
      };
    case "revert_update":
      return reduceRevert(s, u);
    case "compaction_update":
      return u.phase === "started"
        ? withNotice({ ...s, compacting: true }, u.auto ? "Compacting the conversation (automatic)…" : "Compacting the conversation…")
        : withNotice({ ...s, compacting: false }, "Conversation compacted");
    case "permission_update":
      return patchTool(s, u.toolCallId, (t) => ({
        ...t,
        permission: { permission: u.permission, state: u.state, optionKind: u.optionKind, reason: u.reason, ...(u.modified ? { modified: true } : {}) },
      }));
    case "question_update":
      return patchTool(s, u.toolCallId, (t) => ({ ...t, question: { state: u.state } }));
    case "review_update":
      return { ...s, review: u.files };
    case "until_update":
      return withNotice(s, untilNotice(u));
    case "internal":
      return s;
    default:
      return s; // a variant from a newer server: ignored, as the protocol asks
  }
}

/** One line per "until green" check: the attempt, how the command ended, what happens next. */
export function untilNotice(u: UntilUpdate): string {
  const head = `Until green — attempt ${u.attempt}/${u.maxAttempts}: ${u.command}`;
  if (u.verdict === "stopped") return `${head} not run: the turn did not finish`;
  const ended = u.exitCode !== undefined ? `exited ${u.exitCode}` : (u.error ?? "failed");
  const next = { passed: " ✓", retry: "; the agent goes on", attempts: "; no attempts left", cost: "; the cost bound is reached" }[u.verdict];
  return `${head} ${ended}${next}`;
}

function upsertUser(s: SessionView, messageId: string, content: ContentBlock[], state: UserItem["state"]): SessionView {
  const index = s.items.findIndex((i) => i.kind === "user" && i.messageId === messageId);
  if (index < 0) {
    return { ...s, items: [...s.items, { kind: "user", id: `u:${messageId}`, messageId, content, state }] };
  }
  const items = s.items.slice();
  const old = items[index] as UserItem;
  const promoted = { ...old, content: content.length ? content : old.content, state };
  if (state === "promoted" && index !== items.length - 1) {
    // a queued input joins the conversation now: show it where the turn that reads it starts
    items.splice(index, 1);
    items.push(promoted);
  } else {
    items[index] = promoted;
  }
  return { ...s, items };
}

function appendText(s: SessionView, kind: "text" | "reasoning", messageId: string, text: string): SessionView {
  const last = s.items[s.items.length - 1];
  if (last && last.kind === kind && last.messageId === messageId) {
    const items = s.items.slice();
    items[items.length - 1] = { ...last, text: last.text + text };
    return { ...s, items };
  }
  const part = s.items.filter((i) => "messageId" in i && i.kind !== "user" && i.messageId === messageId).length;
  return { ...s, items: [...s.items, { kind, id: `${kind[0]}:${messageId}:${part}`, messageId, text }] };
}

function upsertTool(s: SessionView, u: ToolCallUpdate): SessionView {
  const index = s.items.findIndex((i) => i.kind === "tool" && i.toolCallId === u.toolCallId);
  const patch: Partial<ToolItem> = { messageId: u.messageId, toolName: u.toolName };
  if (u.title !== undefined) patch.title = u.title;
  if (u.kind !== undefined) patch.toolKind = u.kind;
  if (u.status !== undefined) patch.status = u.status;
  if (u.rawInput !== undefined) patch.rawInput = u.rawInput;
  if (u.content !== undefined) patch.content = u.content;
  if (u.locations !== undefined) patch.locations = u.locations;
  if (u.exitCode !== undefined) patch.exitCode = u.exitCode;
  if (u.refused !== undefined) patch.refused = u.refused;
  if (index < 0) {
    const item: ToolItem = { kind: "tool", id: `t:${u.toolCallId}`, toolCallId: u.toolCallId, ...patch } as ToolItem;
    return { ...s, items: [...s.items, item] };
  }
  const items = s.items.slice();
  items[index] = { ...(items[index] as ToolItem), ...patch };
  return { ...s, items };
}

function patchTool(s: SessionView, toolCallId: string, f: (t: ToolItem) => ToolItem): SessionView {
  const index = s.items.findIndex((i) => i.kind === "tool" && i.toolCallId === toolCallId);
  const items = s.items.slice();
  if (index < 0) {
    // the permission or question can come before the tool call's first update
    items.push(f({ kind: "tool", id: `t:${toolCallId}`, toolCallId, messageId: "", toolName: "" }));
  } else {
    items[index] = f(items[index] as ToolItem);
  }
  return { ...s, items };
}

/**
 * Undo (or Rewind…) stages a revert to before a user message (hidden, not deleted); Redo clears
 * it; a new prompt commits it. Its scope says what it takes back: the files and the messages
 * (`both`, the default), the files only (`code`: no message is hidden) or the messages only.
 */
function reduceRevert(s: SessionView, u: RevertUpdate): SessionView {
  const files = u.files ?? [];
  if (u.state === "staged") {
    const revert: NonNullable<SessionView["revert"]> = { state: "staged", messageId: u.messageId, files };
    if (u.scope) revert.scope = u.scope;
    return withNotice({ ...s, revert }, revertNotice(u.scope ?? "both", files.length));
  }
  if (u.state === "cleared") return withNotice({ ...s, revert: undefined }, "Redone.");
  if ((u.scope ?? s.revert?.scope) === "code") return { ...s, revert: undefined };
  const from = s.items.findIndex((i) => i.kind === "user" && i.messageId === (u.messageId ?? s.revert?.messageId));
  return { ...s, revert: undefined, items: from < 0 ? s.items : s.items.slice(0, from) };
}

function revertNotice(scope: RevertScope, n: number): string {
  const files = `${n} file${n === 1 ? "" : "s"}`;
  if (scope === "code") return `Rewound the code: ${n ? `${files} restored to` : "no file changed since"} before that message; the conversation stays. Redo brings the changes back.`;
  if (scope === "conversation") return "Rewound the conversation: that message and the later ones are hidden; the files stay as they are. Redo brings them back.";
  return `Undone: the last prompt${n ? ` and its changes to ${files}` : ""}. Redo brings them back.`;
}

/** The index of the first item an Undo hides, or -1 (a code-only rewind hides none). */
export function revertedFrom(s: SessionView | undefined): number {
  if (!s?.revert || s.revert.state !== "staged" || s.revert.scope === "code") return -1;
  return s.items.findIndex((i) => i.kind === "user" && i.messageId === s.revert!.messageId);
}

/**
 * What Retry sends again: the last prompt's text and mentions (the editor context the server
 * added to it is left out; the current one goes with the retry), or undefined without one.
 */
export function retryPrompt(s: SessionView | undefined): { text: string; blocks: ContentBlock[] } | undefined {
  const last = [...(s?.items ?? [])].reverse().find((i): i is UserItem => i.kind === "user");
  if (!last) return undefined;
  const blocks = last.content.filter((b) => !(b.type === "text" && b.text.startsWith("Editor context:\n")));
  const first = blocks[0];
  if (!first || first.type !== "text") return undefined;
  return { text: first.text, blocks: blocks.slice(1) };
}

/** Whether Retry is offered: the session is idle and its last item is a turn's error. */
export function canRetry(s: SessionView | undefined): boolean {
  return !!s && s.state === "idle" && s.items[s.items.length - 1]?.kind === "error" && !!retryPrompt(s);
}

function withNotice(s: SessionView, text: string): SessionView {
  return { ...s, items: [...s.items, { kind: "notice", id: `n:${s.lastSeq + 1}`, text }] };
}

// -- the whole panel -----------------------------------------------------------------------------

export interface PendingPermission { key: string; params: RequestPermissionParams }
export interface PendingQuestion { key: string; params: AskQuestionParams }
export type ServerStatus = { status: "starting" | "running" | "stopped" | "failed"; message?: string };

export interface ChatState {
  server: ServerStatus;
  sessions: SessionSummary[];
  session?: SessionView;
  permissions: PendingPermission[];
  questions: PendingQuestion[];
  /** Text to put back in the prompt input (after an undo). */
  draft?: { text: string; nonce: number };
  /** The review list of a session (shown when it is the active one's). */
  review?: ReviewSnapshot;
  /** The focus the next prompt carries (the chip in the input area); absent: none is sent. */
  focus?: FocusChip;
  /** The host's answer to the last mention completion request. */
  completions?: { id: number; items: MentionItem[] };
  /** The mode and model choices before there is a session (the server's), for the pickers; a session brings its own. */
  configOptions?: ConfigOption[];
}

export function initialChatState(): ChatState {
  return { server: { status: "starting" }, sessions: [], permissions: [], questions: [] };
}

/** Host → webview messages. */
export type HostMessage =
  | { type: "state"; state: ChatState }
  | { type: "update"; params: SessionUpdateParams }
  | { type: "sessions"; sessions: SessionSummary[] }
  | { type: "server"; server: ServerStatus }
  | { type: "permission"; request: PendingPermission }
  | { type: "question"; request: PendingQuestion }
  | { type: "requestDone"; key: string }
  | { type: "draft"; text: string }
  | { type: "review"; review: ReviewSnapshot | undefined }
  | { type: "focus"; focus: FocusChip | undefined }
  | { type: "completions"; id: number; items: MentionItem[] };

/** Webview → host messages. */
export type WebviewMessage =
  | { type: "ready" }
  | { type: "resync" }
  /**
   * `mentions`: the completions picked for it; `noFocus`: the user removed the focus chip; `images`:
   * pasted or dropped into the input; `until`: the "until green" box was ticked with this command.
   */
  | { type: "prompt"; text: string; mentions?: PickedMention[]; noFocus?: boolean; images?: import("./protocol").ImageBlock[]; until?: string }
  | { type: "complete"; id: number; trigger: Trigger; query: string }
  | { type: "compact" }
  | { type: "stop" }
  /** Retry after a failed turn: the last prompt sent again. */
  | { type: "retry" }
  | { type: "newSession" }
  | { type: "selectSession"; sessionId: string }
  | { type: "refreshSessions" }
  | { type: "searchSessions" }
  | { type: "undo" }
  | { type: "redo" }
  | { type: "setConfigOption"; configId: "mode" | "model"; value: string }
  | { type: "permission"; key: string; optionId?: string; reason?: string }
  | { type: "viewDiff"; key: string; uri: string }
  | { type: "question"; key: string; result: import("./protocol").AskQuestionResult }
  | { type: "openLocation"; uri: string; range?: import("./protocol").Range }
  /** A `path:line[:column]` in an answer was clicked (1-based, path as the model wrote it). */
  | { type: "openCodeRef"; path: string; line: number; column?: number }
  /** Keep or undo hunks: `hunkIds` and `uris` select their union; neither = every pending hunk. */
  | { type: "resolve"; action: import("./protocol").ReviewAction; hunkIds?: string[]; uris?: string[]; reason?: string }
  /** A comment on a hunk (it goes to the agent with the next prompt); "Send comments" sends them now. */
  | { type: "comment"; hunkId: string; text: string }
  | { type: "sendComments" }
  | { type: "rewind"; messageId: string; scope: RevertScope }
  /** The "Show log" button of the banner of a server that failed to start. */
  | { type: "showLog" };

export interface ChatResult {
  state: ChatState;
  /** The webview's copy fell out of step: ask the host for the whole state again. */
  resync?: boolean;
}

/** The webview's reducer: host messages → the panel's state. */
export function reduceChat(state: ChatState, msg: HostMessage): ChatResult {
  switch (msg.type) {
    case "state":
      // the review list and the completions come in their own messages: a state without them keeps the last
      if ((msg.state.review || !state.review) && !state.completions) return { state: msg.state };
      return { state: { ...msg.state, review: msg.state.review ?? state.review, completions: state.completions } };
    case "update": {
      if (!state.session || state.session.sessionId !== msg.params.sessionId) return { state };
      const r = applyUpdate(state.session, msg.params);
      return r.resync ? { state, resync: true } : { state: { ...state, session: r.session } };
    }
    case "sessions":
      return { state: { ...state, sessions: msg.sessions } };
    case "server":
      return { state: { ...state, server: msg.server } };
    case "permission":
      return { state: { ...state, permissions: [...state.permissions.filter((p) => p.key !== msg.request.key), msg.request] } };
    case "question":
      return { state: { ...state, questions: [...state.questions.filter((q) => q.key !== msg.request.key), msg.request] } };
    case "requestDone":
      return {
        state: {
          ...state,
          permissions: state.permissions.filter((p) => p.key !== msg.key),
          questions: state.questions.filter((q) => q.key !== msg.key),
        },
      };
    case "draft":
      return { state: { ...state, draft: { text: msg.text, nonce: (state.draft?.nonce ?? 0) + 1 } } };
    case "review":
      return { state: { ...state, review: msg.review } };
    case "focus":
      return { state: { ...state, focus: msg.focus } };
    case "completions":
      return { state: { ...state, completions: { id: msg.id, items: msg.items } } };
    default:
      return { state };
  }
}

// -- small views used by the panel and the status bar --------------------------------------------

export function formatTokens(n: number): string {
  if (n >= 1_000_000) return `${(n / 1_000_000).toFixed(1)}M`;
  if (n >= 1000) return `${(n / 1000).toFixed(1)}k`;
  return String(n);
}

/** "context 1.5k/200k (1%) · in 1.2k · out 340 · $0.0087" */
export function usageLine(u: Usage | undefined): string {
  if (!u) return "";
  const pct = u.contextSize ? Math.round((100 * u.contextUsed) / u.contextSize) : 0;
  const parts = [
    `context ${formatTokens(u.contextUsed)}/${formatTokens(u.contextSize)} (${pct}%)`,
    `in ${formatTokens(u.inputTokens)}`,
    `out ${formatTokens(u.outputTokens)}`,
  ];
  if (u.cacheReadTokens) parts.push(`cache ${formatTokens(u.cacheReadTokens)}`);
  if (u.cost !== undefined && u.cost !== null) parts.push(`$${u.cost.toFixed(4)}`);
  return parts.join(" · ");
}

/** Past this share of the window the panel offers "Compact now". */
export const COMPACT_AT = 80;

/** The context gauge: the share of the window in use (0–100), its text, and whether to offer compaction. */
export interface Gauge { percent: number; label: string; title: string; compact: boolean }

export function contextGauge(u: Usage | undefined): Gauge | undefined {
  if (!u || !u.contextSize) return undefined;
  // floored: "80%" is shown only when Compact now is offered
  const percent = Math.min(100, Math.max(0, Math.floor((100 * u.contextUsed) / u.contextSize)));
  const cost = u.cost !== undefined && u.cost !== null ? ` · $${u.cost.toFixed(4)}` : "";
  return {
    percent,
    label: `${percent}%${cost}`,
    title: `context ${formatTokens(u.contextUsed)} of ${formatTokens(u.contextSize)} tokens${cost ? `; session cost${cost.slice(2)}` : ""}`,
    compact: percent >= COMPACT_AT,
  };
}

export function stateLabel(s: SessionView | undefined): string {
  if (!s) return "no session";
  if (s.state === "running") return s.error?.retryAt ? "retrying" : "running";
  if (s.state === "requires_action") return "needs your answer";
  return s.stopReason && s.stopReason !== "end_turn" ? `idle (${s.stopReason.replace("_", " ")})` : "idle";
}
