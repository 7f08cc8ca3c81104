/**
 * The "until green" toggle beside the prompt box: ticked, the prompt goes with `until` (docs/
 * protocol.md "Until green") and the agent works until the command exits 0. The box and its
 * command stay as they are for the next prompt.
 */
import { h } from "./dom";

export interface UntilBox {
  el: HTMLElement;
  /** The command when the box is ticked and the command is not empty. */
  command(): string | undefined;
}

export function createUntilBox(): UntilBox {
  const toggle = h("input", { type: "checkbox", "data-testid": "until-toggle", "aria-label": "Until green" });
  const field = h("input", { type: "text", "data-testid": "until-command", placeholder: "command, e.g. npm test", "aria-label": "Until green command", spellcheck: "false" });
  field.disabled = true;
  toggle.addEventListener("change", () => {
    field.disabled = !toggle.checked;
    if (toggle.checked) field.focus();
  });
  const el = h(
    "div",
    { class: "row until", "data-testid": "until-box", title: "After each turn run this command; while it fails, its output goes back to the agent (at most 5 attempts)" },
    h("label", {}, toggle, " Until green"),
    field,
  );
  return { el, command: () => (toggle.checked && field.value.trim() ? field.value.trim() : undefined) };
}
