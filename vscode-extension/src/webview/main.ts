/**
 * The chat panel's page. It keeps the state with the shared reducer (`reduceChat`) and renders it
 * with plain DOM code: each transcript item is rebuilt only when the reducer replaced it. Every
 * element a test or a person drives has a stable `data-testid` (docs/vscode.md lists them).
 */
import {
  canRetry,
  contextGauge,
  initialChatState,
  reduceChat,
  revertedFrom,
  stateLabel,
  usageLine,
  type ChatItem,
  type ChatState,
  type HostMessage,
  type PendingPermission,
  type PendingQuestion,
  type ToolItem,
  type WebviewMessage,
} from "../shared/reducer";
import type { AskQuestionResult, ConfigOption, ContentBlock, PermissionOptionKind, RevertScope, ReviewAction } from "../shared/protocol";
import { countsLine, reviewModel, type Counts, type FileRow, type HunkRow, type ReviewSnapshot } from "../shared/review";
import { applyCompletion, mentionAt, type MentionItem, type MentionQuery, type PickedMention } from "../shared/mentions";
import { linkCodeRefs } from "./links";
import { highlight, renderMarkdown } from "./markdown";

interface VsCodeApi {
  postMessage(msg: WebviewMessage): void;
  getState(): { draft?: string } | undefined;
  setState(state: { draft?: string }): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
let state: ChatState = initialChatState();
const post = (msg: WebviewMessage) => vscode.postMessage(msg);
const openCodeRef = (ref: { path: string; line: number; column?: number }) =>
  post({ type: "openCodeRef", path: ref.path, line: ref.line, ...(ref.column ? { column: ref.column } : {}) });

// -- tiny DOM helper -----------------------------------------------------------------------------

type Attrs = Record<string, string | boolean | undefined | ((e: Event) => void)>;
function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: (Node | string | undefined | false)[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (typeof v === "function") el.addEventListener(k.replace(/^on/, ""), v as EventListener);
    else if (k === "class") el.className = String(v);
    else if (v === true) el.setAttribute(k, "");
    else el.setAttribute(k, v);
  }
  for (const c of children) if (c !== undefined && c !== false) el.append(c);
  return el;
}

// -- the fixed frame -----------------------------------------------------------------------------

const sessionsSelect = h("select", { "data-testid": "sessions-select", title: "Sessions", "aria-label": "Sessions" });
const newButton = h("button", { "data-testid": "new-session-button", title: "New session" }, "+ New");
const searchButton = h("button", { "data-testid": "search-sessions-button", title: "Search past sessions (prompts, answers, tool output)" }, "Search");
const stateBadge = h("span", { class: "state", "data-testid": "session-state" });
// the server not up: "starting…" (prompts sent meanwhile wait for it), or why it failed, with its log
const serverText = h("span", { "data-testid": "server-status-text" });
const showLogButton = h("button", { "data-testid": "server-show-log", hidden: true }, "Show log");
const serverBanner = h("div", { class: "banner", "data-testid": "server-status", hidden: true }, serverText, showLogButton);
const planBox = h("section", { class: "plan", "data-testid": "plan", hidden: true });
const transcript = h("main", { class: "transcript", "data-testid": "transcript" });
const pendingBox = h("section", { class: "pending", "data-testid": "pending" });
const changesBox = h("section", { class: "changes", "data-testid": "changes", hidden: true });
const modeSelect = h("select", { "data-testid": "mode-select", title: "Mode", "aria-label": "Mode" });
const modelSelect = h("select", { "data-testid": "model-select", title: "Model", "aria-label": "Model" });
const usage = h("div", { class: "usage", "data-testid": "usage-line" });
// the context gauge: the share of the model's window in use and the session's cost; "Compact now" past 80 %
const gaugeMeter = h("meter", { min: "0", max: "100", low: "50", high: "80", optimum: "0", "data-testid": "context-gauge-bar" });
const gaugeText = h("span", { class: "gauge-text", "data-testid": "context-gauge-text" });
const compactButton = h("button", { "data-testid": "compact-button", title: "Summarize the older conversation for the model now", hidden: true }, "Compact now");
const gauge = h("div", { class: "row gauge", "data-testid": "context-gauge", hidden: true }, gaugeMeter, gaugeText, compactButton);
// above the input: the focus chip (what of the editor goes with the prompt) and the mention completions
const chips = h("div", { class: "row input-chips", "data-testid": "input-chips" });
const mentionList = h("div", { class: "mention-list", "data-testid": "mention-list", role: "listbox", hidden: true });
const input = h("textarea", { "data-testid": "prompt-input", rows: "3", placeholder: "Ask the agent… (Enter to send, Shift+Enter for a new line)", "aria-label": "Prompt" });
const sendButton = h("button", { "data-testid": "send-button", class: "primary" }, "Send");
const stopButton = h("button", { "data-testid": "stop-button" }, "Stop");
const undoButton = h("button", { "data-testid": "undo-button", title: "Undo the last prompt and its changes" }, "Undo");
const redoButton = h("button", { "data-testid": "redo-button", title: "Redo what Undo took back" }, "Redo");

const app = document.getElementById("app")!;
app.append(
  h("header", { class: "toolbar" }, sessionsSelect, newButton, searchButton, stateBadge),
  serverBanner,
  planBox,
  transcript,
  changesBox,
  pendingBox,
  h(
    "footer",
    {},
    h("div", { class: "row pickers" }, modeSelect, modelSelect),
    gauge,
    usage,
    chips,
    mentionList,
    input,
    h("div", { class: "row buttons" }, sendButton, stopButton, h("span", { class: "spacer" }), undoButton, redoButton),
  ),
);

input.value = vscode.getState()?.draft ?? "";
/** The completions picked since the last send (their blocks go with the prompt while their text is in it). */
let picked: PickedMention[] = [];
/** The user removed the focus chip: the next prompt goes without the editor's focus. */
let focusRemoved = false;
const send = () => {
  const text = input.value.trim();
  if (!text) return;
  const mentions = picked.filter((p) => text.includes(p.text));
  post({ type: "prompt", text, ...(mentions.length ? { mentions } : {}), ...(focusRemoved ? { noFocus: true } : {}) });
  input.value = "";
  picked = [];
  focusRemoved = false;
  closeCompletions();
  renderChips();
  vscode.setState({ draft: "" });
};
sendButton.addEventListener("click", send);
input.addEventListener("keydown", (e) => {
  if (!mentionList.hidden && completionKey(e)) return;
  if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    send();
  }
});
input.addEventListener("input", () => {
  vscode.setState({ draft: input.value });
  askCompletions();
});
input.addEventListener("click", askCompletions);
compactButton.addEventListener("click", () => {
  compactButton.disabled = true;
  post({ type: "compact" });
});
stopButton.addEventListener("click", () => post({ type: "stop" }));
undoButton.addEventListener("click", () => post({ type: "undo" }));
redoButton.addEventListener("click", () => post({ type: "redo" }));
newButton.addEventListener("click", () => post({ type: "newSession" }));
searchButton.addEventListener("click", () => post({ type: "searchSessions" }));
showLogButton.addEventListener("click", () => post({ type: "showLog" }));
sessionsSelect.addEventListener("change", () => {
  if (sessionsSelect.value) post({ type: "selectSession", sessionId: sessionsSelect.value });
});
sessionsSelect.addEventListener("focus", () => post({ type: "refreshSessions" }));
for (const [select, configId] of [[modeSelect, "mode"], [modelSelect, "model"]] as const) {
  select.addEventListener("change", () => post({ type: "setConfigOption", configId, value: select.value }));
}

// -- rendering -----------------------------------------------------------------------------------

const rendered = new Map<string, { item: ChatItem; el: HTMLElement }>();
const cards = new Map<string, HTMLElement>();
let draftNonce = 0;

function render(): void {
  const s = state.session;
  const nearBottom = transcript.scrollHeight - transcript.scrollTop - transcript.clientHeight < 40;

  const server = state.server.status;
  serverBanner.hidden = server === "running";
  serverText.textContent = server === "running" ? "" : state.server.message ?? (server === "starting" ? "Starting the LSP Agent server…" : `Server ${server}.`);
  serverBanner.dataset.status = server;
  showLogButton.hidden = server !== "failed" && server !== "stopped";

  renderSessions();
  stateBadge.textContent = stateLabel(s);
  stateBadge.dataset.state = s?.state ?? "none";
  const busy = s?.state === "running" || s?.state === "requires_action";
  app.classList.toggle("busy", busy);
  stopButton.disabled = !busy;
  undoButton.disabled = !s || busy;
  redoButton.disabled = !s || busy;
  renderConfig(modeSelect, s?.configOptions.find((o) => o.configId === "mode"));
  renderConfig(modelSelect, s?.configOptions.find((o) => o.configId === "model"));
  usage.textContent = usageLine(s?.usage);
  renderGauge();
  renderChips();
  renderCompletions();
  renderPlan();
  renderTranscript(s?.items ?? []);
  renderChanges();
  renderPending();
  if (state.draft && state.draft.nonce !== draftNonce) {
    draftNonce = state.draft.nonce;
    input.value = state.draft.text;
    input.focus();
  }
  if (nearBottom) transcript.scrollTop = transcript.scrollHeight;
}

function renderSessions(): void {
  const active = state.session?.sessionId ?? "";
  const list = state.sessions.slice();
  if (active && !list.some((x) => x.sessionId === active)) {
    list.unshift({ sessionId: active, title: state.session?.title ?? "", workspaceFolder: "", createdAt: "", updatedAt: "", state: state.session!.state, usage: {} });
  }
  const signature = JSON.stringify([active, list.map((x) => [x.sessionId, x.title])]);
  if (sessionsSelect.dataset.signature === signature) return;
  sessionsSelect.dataset.signature = signature;
  sessionsSelect.replaceChildren(
    h("option", { value: "", disabled: true, selected: !active }, list.length ? "Sessions…" : "No sessions yet"),
    ...list.map((x) => h("option", { value: x.sessionId, selected: x.sessionId === active, "data-testid": "session-option" }, x.title || `Session ${x.sessionId.slice(-6)}`)),
  );
}

function renderConfig(select: HTMLSelectElement, option: ConfigOption | undefined): void {
  select.disabled = !option;
  const signature = option ? JSON.stringify([option.currentValue, option.options.map((o) => o.value)]) : "";
  if (select.dataset.signature === signature) return;
  select.dataset.signature = signature;
  select.replaceChildren(
    ...(option
      ? option.options.map((o) => h("option", { value: o.value, selected: o.value === option.currentValue, title: o.description ?? undefined }, o.name))
      : [h("option", {}, select === modeSelect ? "mode" : "model")]),
  );
}

function renderPlan(): void {
  const plan = state.session?.plan ?? [];
  planBox.hidden = plan.length === 0;
  planBox.replaceChildren(
    h("h3", {}, "Plan"),
    h("ul", {}, ...plan.map((e) => h("li", { "data-testid": "plan-entry", "data-status": e.status, class: `plan-${e.status} prio-${e.priority}` }, statusMark(e.status), " ", e.content))),
  );
}

function statusMark(status: string): string {
  return { completed: "✓", in_progress: "▶", cancelled: "✗", pending: "○" }[status] ?? "○";
}

function renderTranscript(items: ChatItem[]): void {
  const seen = new Set<string>();
  let previous: Element | null = null;
  const hiddenFrom = revertedFrom(state.session);
  for (const [index, item] of items.entries()) {
    seen.add(item.id);
    let entry = rendered.get(item.id);
    if (!entry || entry.item !== item) {
      const el = renderItem(item);
      if (entry) entry.el.replaceWith(el);
      entry = { item, el };
      rendered.set(item.id, entry);
    }
    const expected: Element | null = previous ? previous.nextElementSibling : transcript.firstElementChild;
    if (expected !== entry.el) {
      if (previous) previous.after(entry.el);
      else transcript.prepend(entry.el);
    }
    entry.el.classList.toggle("reverted", hiddenFrom >= 0 && index >= hiddenFrom && item.kind !== "notice");
    if (item.kind === "text") entry.el.dataset.status = state.session?.messageStatus[item.messageId] ?? "streaming";
    if (item.kind === "error") {
      // Retry only on the latest error, once the session is idle
      const retry = entry.el.querySelector<HTMLButtonElement>("button.turn-error-retry");
      if (retry) retry.hidden = !(index === items.length - 1 && canRetry(state.session));
    }
    previous = entry.el;
  }
  for (const [id, entry] of rendered) {
    if (!seen.has(id)) {
      entry.el.remove();
      rendered.delete(id);
    }
  }
  if (!items.length && !transcript.querySelector(".empty")) {
    transcript.append(h("div", { class: "empty" }, state.session ? "Ask something to start." : "Start a new session, or pick one above."));
  } else if (items.length) {
    transcript.querySelector(".empty")?.remove();
  }
}

function renderItem(item: ChatItem): HTMLElement {
  switch (item.kind) {
    case "user":
      return h(
        "div",
        { class: "msg user", "data-testid": "message-user", "data-message-id": item.messageId, "data-state": item.state },
        ...item.content.map(renderBlock),
        rewindMenu(item.messageId),
      );
    case "text": {
      const status = state.session?.messageStatus[item.messageId];
      const el = h("div", { class: "msg assistant markdown", "data-testid": "message-assistant", "data-message-id": item.messageId, "data-status": status ?? "streaming" });
      el.innerHTML = renderMarkdown(item.text);
      linkCodeRefs(el, openCodeRef);
      return el;
    }
    case "reasoning": {
      const body = h("div", { class: "markdown" });
      body.innerHTML = renderMarkdown(item.text);
      return h("details", { class: "msg reasoning", "data-testid": "message-reasoning", "data-message-id": item.messageId }, h("summary", {}, "Thinking"), body);
    }
    case "tool":
      return renderTool(item);
    case "notice":
      return h("div", { class: "notice", "data-testid": "notice" }, item.text);
    case "error":
      return h(
        "div",
        { class: "turn-error", "data-testid": "turn-error", role: "alert" },
        h("span", { class: "turn-error-label" }, "Error: "),
        h("span", { class: "turn-error-message", "data-testid": "turn-error-message" }, item.text),
        h("button", { class: "turn-error-retry", "data-testid": "turn-error-retry", title: "Send your last prompt again", onclick: () => post({ type: "retry" }) }, "Retry"),
      );
  }
}

function renderBlock(block: ContentBlock): Node {
  if (block.type === "text" && block.text.startsWith("Editor context:\n")) {
    // what the server added from the editor (active document, selection, diagnostics)
    return h("details", { class: "context", "data-testid": "message-context" }, h("summary", {}, "Editor context"), h("pre", {}, block.text.slice(16)));
  }
  if (block.type === "text") {
    const el = h("div", { class: "markdown" });
    el.innerHTML = renderMarkdown(block.text);
    return el;
  }
  if (block.type === "mention") {
    // #diagnostics, #selection, #buffers, #diff: the server attached what it names
    return h("span", { class: "chip mention", "data-testid": "message-mention", "data-name": block.name, title: `#${block.name} was attached` }, `#${block.name}`);
  }
  const uri = block.uri;
  const range = block.type === "resource_link" ? block.range : undefined;
  const name = uri.split("/").pop() ?? uri;
  const label = range ? `${name}:${range.start.line + 1}` : name;
  return h(
    "a",
    { class: "chip", href: "#", "data-testid": "message-link", "data-uri": uri, title: decodeURIComponent(uri), onclick: (e) => { e.preventDefault(); post({ type: "openLocation", uri, range }); } },
    `↗ ${label}`,
  );
}

const KIND_LABEL: Record<string, string> = { read: "read", edit: "edit", delete: "delete", move: "move", search: "search", execute: "run", think: "think", fetch: "fetch", other: "tool" };

function renderTool(t: ToolItem): HTMLElement {
  const status = t.status ?? "pending";
  const input = t.rawInput as Record<string, unknown> | undefined;
  const command = typeof input?.command === "string" ? input.command : undefined;
  const text = (t.content ?? []).map((c) => (c.type === "text" ? c.text : c.patch)).join("\n");
  const running = status === "in_progress" || status === "pending";
  // a command that exited non-zero is "completed" (the model read its output): say how it ended
  const exited = status === "completed" && t.exitCode !== undefined;
  const nonZero = exited && t.exitCode !== 0;
  const badge = exited ? `exit ${t.exitCode}` : status.replace("_", " ");
  return h(
    "div",
    { class: `tool status-${status}`, "data-testid": "tool-call", "data-tool-call-id": t.toolCallId, "data-status": status, "data-tool-name": t.toolName, "data-exit-code": exited ? String(t.exitCode) : undefined },
    h(
      "div",
      { class: "tool-head" },
      h("span", { class: "kind" }, KIND_LABEL[t.toolKind ?? "other"] ?? "tool"),
      h("span", { class: "tool-title", "data-testid": "tool-call-title" }, t.title || t.toolName || "tool"),
      h("span", { class: `badge ${nonZero ? "failed" : status}`, "data-testid": "tool-call-status" }, badge),
    ),
    command ? h("pre", { class: "command" }, h("code", {}, `$ ${command}`)) : undefined,
    ...(t.locations ?? []).map((loc) =>
      h(
        "a",
        { class: "location", href: "#", "data-testid": "tool-call-location", onclick: (e) => { e.preventDefault(); post({ type: "openLocation", uri: loc.uri, range: loc.range }); } },
        `${loc.uri.split("/").pop()}${loc.range ? `:${loc.range.start.line + 1}` : ""}`,
      ),
    ),
    t.permission
      ? h(
          "div",
          { class: "perm-state", "data-testid": "tool-call-permission", "data-modified": t.permission.modified ? "true" : undefined },
          `permission ${t.permission.state}${t.permission.modified ? " with your edit" : ""}${t.permission.reason ? `: ${t.permission.reason}` : ""}`,
        )
      : undefined,
    text ? outputBlock(text, running || nonZero || status === "failed" || status === "interrupted", (t.content ?? []).some((c) => c.type === "diff")) : undefined,
  );
}

function outputBlock(text: string, open: boolean, isDiff: boolean): HTMLElement {
  const code = h("code", { class: "hljs" });
  code.innerHTML = highlight(text, isDiff ? "diff" : undefined);
  return h("details", { class: "output", open }, h("summary", {}, "Output"), h("pre", { "data-testid": "tool-call-output" }, code));
}

// -- the context gauge, the focus chip and the mention completions --------------------------------

function renderGauge(): void {
  const g = contextGauge(state.session?.usage);
  gauge.hidden = !g;
  if (!g) return;
  gauge.dataset.percent = String(g.percent);
  gauge.title = g.title;
  gaugeMeter.value = g.percent;
  gaugeText.textContent = g.label;
  compactButton.hidden = !g.compact;
  compactButton.disabled = !!state.session?.compacting || state.session?.state !== "idle";
}

function renderChips(): void {
  const f = state.focus;
  const signature = JSON.stringify([f, focusRemoved]);
  if (chips.dataset.signature === signature) return;
  chips.dataset.signature = signature;
  chips.replaceChildren(
    ...(f && !focusRemoved
      ? [
          h(
            "span",
            { class: "chip focus-chip", "data-testid": "focus-chip", title: f.title },
            f.label,
            h("button", { class: "link", "data-testid": "focus-chip-remove", title: "Send the next prompt without it", onclick: () => { focusRemoved = true; renderChips(); } }, "×"),
          ),
        ]
      : []),
  );
  chips.hidden = !chips.childElementCount;
}

let completionId = 0;
let completionQuery: MentionQuery | undefined;
let completionItems: MentionItem[] = [];
let completionIndex = 0;
let completionShown: ChatState["completions"];

/** Asks the host for the completions of the `@…`/`#…` word at the caret (or closes the list). */
function askCompletions(): void {
  const caret = input.selectionStart ?? input.value.length;
  const q = input.selectionEnd === caret ? mentionAt(input.value, caret) : undefined;
  if (!q) return closeCompletions();
  completionQuery = q;
  post({ type: "complete", id: ++completionId, trigger: q.trigger, query: q.query });
}

function closeCompletions(): void {
  completionQuery = undefined;
  completionItems = [];
  mentionList.hidden = true;
  mentionList.replaceChildren();
}

function renderCompletions(): void {
  const answer = state.completions;
  if (answer === completionShown) return;
  completionShown = answer;
  // only the answer to the last question, while its word is still being typed
  if (!answer || answer.id !== completionId || !completionQuery) return;
  completionItems = answer.items;
  completionIndex = 0;
  drawCompletions();
}

function drawCompletions(): void {
  mentionList.hidden = !completionItems.length;
  mentionList.replaceChildren(
    ...completionItems.map((item, i) =>
      h(
        "div",
        { class: `mention-item${i === completionIndex ? " selected" : ""}`, role: "option", "data-testid": "mention-item", "data-insert": item.insert, onmousedown: (e) => { e.preventDefault(); accept(i); } },
        h("span", { class: "mention-label" }, item.label),
        item.detail ? h("span", { class: "mention-detail" }, item.detail) : undefined,
      ),
    ),
  );
}

/** Arrow keys, Enter/Tab and Escape while the list is open; true when the key was the list's. */
function completionKey(e: KeyboardEvent): boolean {
  if (e.key === "ArrowDown" || e.key === "ArrowUp") {
    completionIndex = (completionIndex + (e.key === "ArrowDown" ? 1 : completionItems.length - 1)) % completionItems.length;
    drawCompletions();
  } else if ((e.key === "Enter" || e.key === "Tab") && !e.shiftKey) {
    accept(completionIndex);
  } else if (e.key === "Escape") {
    closeCompletions();
  } else {
    return false;
  }
  e.preventDefault();
  return true;
}

function accept(index: number): void {
  const item = completionItems[index];
  const q = completionQuery;
  if (!item || !q) return;
  const next = applyCompletion(input.value, q, item.insert);
  input.value = next.text;
  input.setSelectionRange(next.caret, next.caret);
  picked.push({ text: item.insert, block: item.block });
  vscode.setState({ draft: input.value });
  closeCompletions();
  input.focus();
}

// -- rewind ----------------------------------------------------------------------------------------

const REWIND_SCOPES: [RevertScope, string, string][] = [
  ["both", "Code and conversation", "Restore the files the agent changed since, and hide this message and the later ones"],
  ["code", "Code only", "Restore the files the agent changed since; the conversation stays"],
  ["conversation", "Conversation only", "Hide this message and the later ones; the files stay as they are"],
];

/** "Rewind…" under a user message: the three scopes of `agent/revert/stage`. Redo takes it back. */
function rewindMenu(messageId: string): HTMLElement {
  const choices = h(
    "div",
    { class: "rewind-choices", "data-testid": "rewind-menu", hidden: true },
    ...REWIND_SCOPES.map(([scope, label, title]) =>
      h("button", { "data-testid": `rewind-${scope}`, title, onclick: () => { choices.hidden = true; post({ type: "rewind", messageId, scope }); } }, label),
    ),
    h("button", { "data-testid": "rewind-cancel", onclick: () => (choices.hidden = true) }, "Cancel"),
  );
  return h(
    "div",
    { class: "rewind" },
    h("button", { class: "link", "data-testid": "rewind-button", title: "Go back to before this message", onclick: () => (choices.hidden = !choices.hidden) }, "Rewind…"),
    choices,
  );
}

// -- the Changes section ---------------------------------------------------------------------------

let changesShown: ReviewSnapshot | undefined;
let changesCollapsed = false;
const collapsedFiles = new Set<string>();

function renderChanges(force = false): void {
  const review = state.review && state.review.sessionId === state.session?.sessionId ? state.review : undefined;
  if (review === changesShown && !force) return;
  changesShown = review;
  changesBox.hidden = !review?.files.length;
  if (!review?.files.length) {
    changesBox.replaceChildren();
    return;
  }
  const model = reviewModel(review);
  const resolve = (action: ReviewAction, selection: { hunkIds?: string[]; uris?: string[] } = {}) => post({ type: "resolve", action, ...selection });
  const pending = model.counts.pending > 0;
  const head = h(
    "div",
    { class: "changes-head" },
    h("button", { class: "link twisty", "data-testid": "changes-toggle", title: changesCollapsed ? "Show the changes" : "Hide the changes", onclick: () => { changesCollapsed = !changesCollapsed; renderChanges(true); } }, changesCollapsed ? "▸" : "▾"),
    h("span", { class: "changes-title" }, "Changes"),
    countsSpan("changes-counts", model.counts),
    h("span", { class: "spacer" }),
    h("button", { "data-testid": "changes-keep-all", disabled: !pending, title: "Keep every pending change", onclick: () => resolve("keep") }, "Keep all"),
    h("button", { "data-testid": "changes-undo-all", disabled: !pending, title: "Undo every pending change", onclick: () => resolve("undo") }, "Undo all"),
  );
  changesBox.replaceChildren(head, ...(changesCollapsed ? [] : [h("div", { class: "changes-list" }, ...model.files.map((f) => fileRow(f, resolve)))]));
}

function countsSpan(testid: string, c: Counts): HTMLElement {
  return h("span", { class: "counts", "data-testid": testid, "data-pending": String(c.pending), "data-kept": String(c.kept), "data-undone": String(c.undone) }, countsLine(c));
}

type Resolve = (action: ReviewAction, selection?: { hunkIds?: string[]; uris?: string[] }) => void;

function fileRow(f: FileRow, resolve: Resolve): HTMLElement {
  const collapsed = collapsedFiles.has(f.uri);
  const pending = f.counts.pending > 0;
  return h(
    "div",
    { class: "change-file", "data-testid": "change-file", "data-uri": f.uri, "data-status": f.status },
    h(
      "div",
      { class: "row change-file-head" },
      h("button", { class: "link twisty", onclick: () => { if (collapsed) collapsedFiles.delete(f.uri); else collapsedFiles.add(f.uri); renderChanges(true); } }, collapsed ? "▸" : "▾"),
      h("a", { href: "#", class: "file-name", title: f.dir ? `${f.dir}/${f.name}` : f.name, "data-testid": "change-file-open", onclick: (e) => { e.preventDefault(); post({ type: "openLocation", uri: f.uri }); } }, f.name),
      f.dir ? h("span", { class: "dir" }, f.dir.split("/").slice(-2).join("/")) : undefined,
      countsSpan("change-file-counts", f.counts),
      h("span", { class: "spacer" }),
      pending ? h("button", { "data-testid": "change-file-keep", title: "Keep this file's pending changes", onclick: () => resolve("keep", { uris: [f.uri] }) }, "Keep") : undefined,
      pending ? h("button", { "data-testid": "change-file-undo", title: "Undo this file's pending changes", onclick: () => resolve("undo", { uris: [f.uri] }) }, "Undo") : undefined,
    ),
    ...(collapsed ? [] : f.hunks.map((hk) => hunkRow(hk, resolve))),
  );
}

function hunkRow(hk: HunkRow, resolve: Resolve): HTMLElement {
  return h(
    "div",
    { class: `row change-hunk status-${hk.status}`, "data-testid": "change-hunk", "data-hunk-id": hk.hunkId, "data-status": hk.status },
    h(
      "a",
      { href: "#", class: "hunk-label", "data-testid": "change-hunk-open", title: hk.line ? `line ${hk.line}` : "no longer found in the file", onclick: (e) => { e.preventDefault(); post({ type: "openLocation", uri: hk.uri, range: hk.range ?? undefined }); } },
      h("span", { class: "line" }, hk.line ? `${hk.line}` : "?"),
      ` ${hk.label}`,
    ),
    h("span", { class: "add" }, `+${hk.additions}`),
    h("span", { class: "del" }, `−${hk.deletions}`),
    hk.status === "pending"
      ? h("button", { "data-testid": "change-hunk-keep", title: "Keep this change", onclick: () => resolve("keep", { hunkIds: [hk.hunkId] }) }, "Keep")
      : h("span", { class: `badge ${hk.status}`, "data-testid": "change-hunk-status" }, hk.status),
    hk.status === "pending" ? h("button", { "data-testid": "change-hunk-undo", title: "Undo this change", onclick: () => resolve("undo", { hunkIds: [hk.hunkId] }) }, "Undo") : undefined,
  );
}

// -- permission and question cards ---------------------------------------------------------------

function renderPending(): void {
  const active = state.session?.sessionId;
  const wanted = new Map<string, () => HTMLElement>();
  for (const p of state.permissions) if (!active || p.params.sessionId === active) wanted.set(p.key, () => permissionCard(p));
  for (const q of state.questions) if (!active || q.params.sessionId === active) wanted.set(q.key, () => questionCard(q));
  for (const [key, el] of cards) {
    if (!wanted.has(key)) {
      el.remove();
      cards.delete(key);
    }
  }
  for (const [key, make] of wanted) {
    if (!cards.has(key)) {
      const el = make();
      cards.set(key, el);
      pendingBox.append(el);
    }
  }
}

const PERMISSION_BUTTONS: [PermissionOptionKind, string, string][] = [
  ["allow_once", "Allow once", "permission-allow-once"],
  ["allow_session", "Allow for session", "permission-allow-session"],
  ["allow_always", "Always", "permission-allow-always"],
  ["reject_once", "Deny", "permission-deny"],
];

/** Exactly what "for session"/"always" save (the server's `always`; an older server's `patterns`). */
function savedPatterns(params: PendingPermission["params"]): HTMLElement | undefined {
  const saves = params.always ?? params.patterns;
  if (!saves.length) return undefined;
  return h("div", { class: "patterns", "data-testid": "permission-saves" }, `"for session"/"always" saves: ${params.permission} ${saves.join(", ")}`);
}

function permissionCard(p: PendingPermission): HTMLElement {
  const { params } = p;
  const answer = (optionId?: string, reason?: string) => post({ type: "permission", key: p.key, optionId, reason });
  const option = (kind: PermissionOptionKind) => params.options.find((o) => o.kind === kind);
  const subject = params.subject;
  const details: (Node | undefined)[] = [];
  if (subject?.type === "command") details.push(h("pre", { class: "command" }, h("code", {}, `$ ${subject.command}`)));
  if (subject?.type === "fetch") details.push(h("div", { class: "url" }, subject.url));
  if (subject?.type === "edit") {
    for (const f of subject.files) {
      details.push(
        h(
          "div",
          { class: "file" },
          h("span", {}, `${f.uri.split("/").pop()} `),
          h("span", { class: "add" }, `+${f.additions}`),
          h("span", { class: "del" }, ` −${f.deletions} `),
          h("button", { "data-testid": "permission-view-diff", "data-uri": f.uri, onclick: () => post({ type: "viewDiff", key: p.key, uri: f.uri }) }, "View diff"),
        ),
      );
    }
  }
  const reason = h("textarea", { "data-testid": "permission-reason-input", rows: "2", placeholder: "Why not? The agent reads this and goes on." });
  const reasonBox = h(
    "div",
    { class: "reason", hidden: true },
    reason,
    h("button", { "data-testid": "permission-deny-with-reason-submit", onclick: () => answer(option("reject_once")?.optionId ?? "reject_once", reason.value.trim() || "denied") }, "Send"),
  );
  const buttons = PERMISSION_BUTTONS.filter(([kind]) => option(kind)).map(([kind, label, testid]) =>
    h("button", { "data-testid": testid, "data-option-id": option(kind)!.optionId, class: kind === "allow_once" ? "primary" : undefined, onclick: () => answer(option(kind)!.optionId) }, label),
  );
  if (option("reject_once")) {
    buttons.push(h("button", { "data-testid": "permission-deny-with-reason", onclick: () => { reasonBox.hidden = false; reason.focus(); } }, "Deny with reason…"));
  }
  return h(
    "div",
    { class: "card permission", "data-testid": "permission-card", "data-key": p.key, "data-permission": params.permission, "data-tool-call-id": params.toolCallId },
    h("div", { class: "card-title" }, `Allow ${params.permission}: ${params.title}`),
    params.description ? h("div", { class: "desc" }, params.description) : undefined,
    ...details,
    savedPatterns(params),
    h("div", { class: "row buttons" }, ...buttons),
    reasonBox,
  );
}

function questionCard(q: PendingQuestion): HTMLElement {
  const getters: (() => [string, { selected: string[]; custom?: string }])[] = [];
  const blocks = q.params.questions.map((question, qi) => {
    const name = `${q.key}-${qi}`;
    const multiple = !!question.multiple;
    const boxes = question.options.map((o) =>
      h("input", { type: multiple ? "checkbox" : "radio", name, value: o.label, "data-testid": "question-option-input", "data-label": o.label }),
    );
    const custom = question.custom !== false ? h("input", { type: "text", "data-testid": "question-custom-input", placeholder: "Other answer…" }) : undefined;
    getters.push(() => {
      const selected = boxes.filter((b) => b.checked).map((b) => b.value);
      const text = custom?.value.trim();
      return [question.questionId, text ? { selected, custom: text } : { selected }];
    });
    return h(
      "fieldset",
      { class: "question", "data-testid": "question", "data-question-id": question.questionId },
      h("legend", {}, question.header),
      h("div", { class: "q" }, question.question),
      ...question.options.map((o, i) =>
        h("label", { class: "option", "data-testid": "question-option", "data-label": o.label }, boxes[i], ` ${o.label}`, o.description ? h("span", { class: "desc" }, ` — ${o.description}`) : undefined),
      ),
      custom,
    );
  });
  const answer = (result: AskQuestionResult) => post({ type: "question", key: q.key, result });
  return h(
    "div",
    { class: "card question-card", "data-testid": "question-card", "data-key": q.key },
    ...blocks,
    h(
      "div",
      { class: "row buttons" },
      h("button", { class: "primary", "data-testid": "question-submit", onclick: () => answer({ outcome: "answered", answers: Object.fromEntries(getters.map((g) => g())) }) }, "Answer"),
      h("button", { "data-testid": "question-decline", onclick: () => answer({ outcome: "declined" }) }, "Decline"),
    ),
  );
}

// -- messages from the extension -----------------------------------------------------------------

let scheduled = false;
window.addEventListener("message", (event: MessageEvent<HostMessage>) => {
  const result = reduceChat(state, event.data);
  state = result.state;
  if (result.resync) post({ type: "resync" });
  if (!scheduled) {
    scheduled = true;
    // one render per burst of messages (a timer, not requestAnimationFrame: that one sleeps while hidden)
    setTimeout(() => {
      scheduled = false;
      render();
    }, 0);
  }
});
render();
post({ type: "ready" });
