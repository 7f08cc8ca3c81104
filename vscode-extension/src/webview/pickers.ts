/** The drop-downs: the sessions (toolbar) and the session's mode and model (footer). */
import { h } from "./dom";
import type { Part, Ui } from "./ui";
import { pickerOption } from "./view";

export function createSessionPicker(ui: Ui): Part<HTMLSelectElement> {
  const el = h("select", { "data-testid": "sessions-select", title: "Sessions", "aria-label": "Sessions" });
  el.addEventListener("change", () => {
    if (el.value) ui.post({ type: "selectSession", sessionId: el.value });
  });
  el.addEventListener("focus", () => ui.post({ type: "refreshSessions" }));
  const render = () => {
    const state = ui.state();
    const active = state.session?.sessionId ?? "";
    const list = state.sessions.slice();
    if (active && !list.some((x) => x.sessionId === active)) {
      list.unshift({ sessionId: active, title: state.session?.title ?? "", workspaceFolder: "", createdAt: "", updatedAt: "", state: state.session!.state, usage: {} });
    }
    const signature = JSON.stringify([active, list.map((x) => [x.sessionId, x.title])]);
    if (el.dataset.signature === signature) return;
    el.dataset.signature = signature;
    el.replaceChildren(
      h("option", { value: "", disabled: true, selected: !active }, list.length ? "Sessions…" : "No sessions yet"),
      ...list.map((x) => h("option", { value: x.sessionId, selected: x.sessionId === active, "data-testid": "session-option" }, x.title || `Session ${x.sessionId.slice(-6)}`)),
    );
  };
  return { el, render };
}

/** The mode or the model picker (`configId`), from the session's config options. */
export function createConfigPicker(ui: Ui, configId: "mode" | "model"): Part<HTMLSelectElement> {
  const label = configId === "mode" ? "Mode" : "Model";
  const el = h("select", { "data-testid": `${configId}-select`, title: label, "aria-label": label });
  el.addEventListener("change", () => ui.post({ type: "setConfigOption", configId, value: el.value }));
  const render = () => {
    const option = pickerOption(ui.state(), configId);
    el.disabled = !option;
    const current = option?.options.find((o) => o.value === option.currentValue);
    el.title = current ? `${label}: ${current.name}` : label;
    const signature = option ? JSON.stringify([option.currentValue, option.options.map((o) => o.value)]) : "";
    if (el.dataset.signature === signature) return;
    el.dataset.signature = signature;
    el.replaceChildren(
      ...(option
        ? option.options.map((o) => h("option", { value: o.value, selected: o.value === option.currentValue, title: o.description ?? undefined }, o.name))
        : [h("option", {}, configId)]),
    );
  };
  return { el, render };
}
