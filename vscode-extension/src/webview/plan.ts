/** The plan: the todo list of the last `plan_update`, above the transcript. */
import { h } from "./dom";
import type { Part, Ui } from "./ui";

const MARKS: Record<string, string> = { completed: "✓", in_progress: "▶", cancelled: "✗", pending: "○" };

export function createPlan(ui: Ui): Part {
  const el = h("section", { class: "plan", "data-testid": "plan", hidden: true });
  const render = () => {
    const plan = ui.state().session?.plan ?? [];
    el.hidden = plan.length === 0;
    el.replaceChildren(
      h("h3", {}, "Plan"),
      h("ul", {}, ...plan.map((e) => h("li", { "data-testid": "plan-entry", "data-status": e.status, class: `plan-${e.status} prio-${e.priority}` }, MARKS[e.status] ?? "○", " ", e.content))),
    );
  };
  return { el, render };
}
