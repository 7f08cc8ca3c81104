/** The context gauge (the share of the model's window in use, the cost, "Compact now" past 80 %) and the usage line. */
import { contextGauge, usageLine } from "../shared/reducer";
import { h } from "./dom";
import type { Part, Ui } from "./ui";

export function createGauge(ui: Ui): Part {
  const meter = h("meter", { min: "0", max: "100", low: "50", high: "80", optimum: "0", "data-testid": "context-gauge-bar" });
  const text = h("span", { class: "gauge-text", "data-testid": "context-gauge-text" });
  const compact = h("button", { "data-testid": "compact-button", title: "Summarize the older conversation for the model now", hidden: true }, "Compact now");
  compact.addEventListener("click", () => {
    compact.disabled = true;
    ui.post({ type: "compact" });
  });
  const el = h("div", { class: "row gauge", "data-testid": "context-gauge", hidden: true }, meter, text, compact);
  const render = () => {
    const session = ui.state().session;
    const g = contextGauge(session?.usage);
    el.hidden = !g;
    if (!g) return;
    el.dataset.percent = String(g.percent);
    el.title = g.title;
    meter.value = g.percent;
    text.textContent = g.label;
    compact.hidden = !g.compact;
    compact.disabled = !!session?.compacting || session?.state !== "idle";
  };
  return { el, render };
}

export function createUsageLine(ui: Ui): Part {
  const el = h("div", { class: "usage", "data-testid": "usage-line" });
  return { el, render: () => void (el.textContent = usageLine(ui.state().session?.usage)) };
}
