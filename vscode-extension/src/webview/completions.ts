/** The `@…`/`#…` completions under the prompt input: asked of the host as you type, picked with the keys or the mouse. */
import type { ChatState } from "../shared/reducer";
import { applyCompletion, mentionAt, type MentionItem, type MentionQuery, type PickedMention } from "../shared/mentions";
import { h } from "./dom";
import type { Part, Ui } from "./ui";

export interface Completions extends Part {
  /** Asks for the completions of the word at the caret (or closes the list). */
  ask(): void;
  close(): void;
  /** Arrow keys, Enter/Tab and Escape while the list is open; true when the key was the list's. */
  key(e: KeyboardEvent): boolean;
}

export function createCompletions(ui: Ui, input: HTMLTextAreaElement, picked: (mention: PickedMention) => void): Completions {
  const el = h("div", { class: "mention-list", id: "mention-list", "data-testid": "mention-list", role: "listbox", "aria-label": "Mentions", hidden: true });
  // the input drives the list (a combobox): screen readers follow the selected item without moving the focus
  input.setAttribute("aria-autocomplete", "list");
  input.setAttribute("aria-controls", el.id);
  let id = 0;
  let query: MentionQuery | undefined;
  let items: MentionItem[] = [];
  let index = 0;
  let shown: ChatState["completions"];

  const draw = () => {
    el.hidden = !items.length;
    input.setAttribute("aria-expanded", String(!el.hidden));
    if (items.length) input.setAttribute("aria-activedescendant", `mention-${index}`);
    else input.removeAttribute("aria-activedescendant");
    el.replaceChildren(
      ...items.map((item, i) =>
        h(
          "div",
          { class: `mention-item${i === index ? " selected" : ""}`, id: `mention-${i}`, role: "option", "aria-selected": String(i === index), "data-testid": "mention-item", "data-insert": item.insert, onmousedown: (e) => { e.preventDefault(); accept(i); } },
          h("span", { class: "mention-label" }, item.label),
          item.detail ? h("span", { class: "mention-detail" }, item.detail) : undefined,
        ),
      ),
    );
  };
  const close = () => {
    query = undefined;
    items = [];
    el.hidden = true;
    el.replaceChildren();
    input.setAttribute("aria-expanded", "false");
    input.removeAttribute("aria-activedescendant");
  };
  const accept = (i: number) => {
    const item = items[i];
    const q = query;
    if (!item || !q) return;
    const next = applyCompletion(input.value, q, item.insert);
    input.value = next.text;
    input.setSelectionRange(next.caret, next.caret);
    picked({ text: item.insert, block: item.block });
    close();
    input.focus();
  };
  const ask = () => {
    const caret = input.selectionStart ?? input.value.length;
    const q = input.selectionEnd === caret ? mentionAt(input.value, caret) : undefined;
    if (!q) return close();
    query = q;
    ui.post({ type: "complete", id: ++id, trigger: q.trigger, query: q.query });
  };
  const render = () => {
    const answer = ui.state().completions;
    if (answer === shown) return;
    shown = answer;
    // only the answer to the last question, while its word is still being typed
    if (!answer || answer.id !== id || !query) return;
    items = answer.items;
    index = 0;
    draw();
  };
  const key = (e: KeyboardEvent): boolean => {
    if (el.hidden) return false;
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      index = (index + (e.key === "ArrowDown" ? 1 : items.length - 1)) % items.length;
      draw();
    } else if ((e.key === "Enter" || e.key === "Tab") && !e.shiftKey) {
      accept(index);
    } else if (e.key === "Escape") {
      close();
    } else {
      return false;
    }
    e.preventDefault();
    return true;
  };
  return { el, render, ask, close, key };
}
