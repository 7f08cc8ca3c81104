/**
 * The chat panel's page: it keeps the state with the shared reducer (`reduceChat`) and lets each
 * part of the page (one module per job: transcript, tool cards, pending cards, Changes, plan,
 * pickers, composer…) redraw itself from it. Plain DOM, no framework: docs/vscode.md says why.
 * Every element a test or a person drives has a stable `data-testid` (docs/vscode.md lists them).
 */
import { initialChatState, reduceChat, type ChatState, type HostMessage, type WebviewMessage } from "../shared/reducer";
import { createChanges } from "./changes";
import { createComposer } from "./composer";
import { h } from "./dom";
import { createGauge, createUsageLine } from "./gauge";
import { createPending } from "./pending";
import { createConfigPicker, createSessionPicker } from "./pickers";
import { createPlan } from "./plan";
import { createServerBanner, createStateBadge, createWorkingIndicator } from "./status";
import { createTranscript } from "./transcript";
import type { Part, Ui } from "./ui";

interface VsCodeApi {
  postMessage(msg: WebviewMessage): void;
  getState(): { draft?: string } | undefined;
  setState(state: { draft?: string }): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
let state: ChatState = initialChatState();
const ui: Ui = {
  state: () => state,
  post: (msg) => vscode.postMessage(msg),
  openCodeRef: (ref) => vscode.postMessage({ type: "openCodeRef", path: ref.path, line: ref.line, ...(ref.column ? { column: ref.column } : {}) }),
};

const sessions = createSessionPicker(ui);
const newButton = h("button", { "data-testid": "new-session-button", title: "New session", onclick: () => ui.post({ type: "newSession" }) }, "+ New");
const searchButton = h("button", { "data-testid": "search-sessions-button", title: "Search past sessions (prompts, answers, tool output)", onclick: () => ui.post({ type: "searchSessions" }) }, "Search");
const badge = createStateBadge(ui);
const banner = createServerBanner(ui);
const plan = createPlan(ui);
const transcript = createTranscript(ui);
const working = createWorkingIndicator(ui);
const changes = createChanges(ui);
const pending = createPending(ui);
const mode = createConfigPicker(ui, "mode");
const model = createConfigPicker(ui, "model");
const pickers: Part = { el: h("div", { class: "row pickers" }, mode.el, model.el), render: () => (mode.render(), model.render()) };
const composer = createComposer(
  ui,
  { load: () => vscode.getState()?.draft ?? "", save: (draft) => vscode.setState({ draft }) },
  [pickers, createGauge(ui), createUsageLine(ui)],
  () => transcript.follow(),
);

const app = document.getElementById("app")!;
app.append(h("header", { class: "toolbar" }, sessions.el, newButton, searchButton, badge.el), banner.el, plan.el, transcript.el, working.el, changes.el, pending.el, composer.el);
const parts: Part[] = [banner, sessions, badge, composer, plan, transcript, working, changes, pending];

function render(): void {
  const t = transcript.el;
  const nearBottom = t.scrollHeight - t.scrollTop - t.clientHeight < 40;
  const s = state.session;
  app.classList.toggle("busy", s?.state === "running" || s?.state === "requires_action");
  for (const part of parts) part.render();
  if (nearBottom) t.scrollTop = t.scrollHeight;
}

let scheduled = false;
window.addEventListener("message", (event: MessageEvent<HostMessage>) => {
  const result = reduceChat(state, event.data);
  state = result.state;
  if (result.resync) ui.post({ type: "resync" });
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
ui.post({ type: "ready" });
