/** The session's state badge (toolbar) and the banner shown while the server is not running. */
import { stateLabel } from "../shared/reducer";
import { h } from "./dom";
import type { Part, Ui } from "./ui";
import { workingLabel } from "./view";

export function createStateBadge(ui: Ui): Part {
  const el = h("span", { class: "state", "data-testid": "session-state", role: "status", "aria-label": "Session state" });
  const render = () => {
    const s = ui.state().session;
    el.textContent = stateLabel(s);
    el.dataset.state = s?.state ?? "none";
  };
  return { el, render };
}

/** The server not up: "starting…" (prompts sent meanwhile wait for it), or why it failed, with its log. */
export function createServerBanner(ui: Ui): Part {
  const text = h("span", { "data-testid": "server-status-text" });
  const showLog = h("button", { "data-testid": "server-show-log", hidden: true, onclick: () => ui.post({ type: "showLog" }) }, "Show log");
  const el = h("div", { class: "banner", "data-testid": "server-status", hidden: true }, text, showLog);
  const render = () => {
    const server = ui.state().server;
    el.hidden = server.status === "running";
    text.textContent = server.status === "running" ? "" : server.message ?? (server.status === "starting" ? "Starting the LSP Agent server…" : `Server ${server.status}.`);
    el.dataset.status = server.status;
    showLog.hidden = server.status !== "failed" && server.status !== "stopped";
  };
  return { el, render };
}

/** "Working…" with a spinner while a turn runs (a status region: screen readers hear it change). */
export function createWorkingIndicator(ui: Ui): Part {
  const text = h("span", { class: "working-text", "data-testid": "working-text" });
  const spinner = h("span", { class: "spinner", "aria-hidden": "true" });
  const el = h("div", { class: "working", "data-testid": "working-indicator", role: "status", "aria-live": "polite" }, spinner, text);
  const render = () => {
    const s = ui.state().session;
    const label = workingLabel(s) ?? "";
    el.dataset.active = label ? "true" : "false";
    el.dataset.state = s?.state ?? "none";
    spinner.hidden = s?.state !== "running";
    if (text.textContent !== label) text.textContent = label;
  };
  return { el, render };
}
