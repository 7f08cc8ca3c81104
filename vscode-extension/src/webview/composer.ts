/**
 * The prompt input and what goes with it: the focus chip, pasted or dropped images, the mention
 * completions, the "until green" box, the mode and model pickers, and the Send/Stop/Undo/Redo
 * buttons. The draft survives the page (VS Code state).
 */
import type { PickedMention } from "../shared/mentions";
import { attachImages } from "./attachedImages";
import { createCompletions } from "./completions";
import { h } from "./dom";
import type { Part, Ui } from "./ui";
import { createUntilBox } from "./untilBox";

/** Where the unsent text is kept while the page is hidden or rebuilt. */
export interface Drafts {
  load(): string;
  save(text: string): void;
}

export function createComposer(ui: Ui, drafts: Drafts, above: Part[], onSend: () => void): Part {
  const input = h("textarea", { "data-testid": "prompt-input", rows: "3", placeholder: "Ask the agent… (Enter to send, Shift+Enter for a new line)", "aria-label": "Prompt" });
  const sendButton = h("button", { "data-testid": "send-button", class: "primary" }, "Send");
  const stopButton = h("button", { "data-testid": "stop-button" }, "Stop");
  // "Rewind", not "Undo": the Changes section's Undo buttons revert one change; this takes back a whole prompt
  const undoButton = h("button", { "data-testid": "undo-button", title: "Take back the last prompt and the changes it made (Redo brings them back)" }, "Rewind last prompt");
  const redoButton = h("button", { "data-testid": "redo-button", title: "Bring back what Rewind last prompt took back" }, "Redo");
  const chips = h("div", { class: "row input-chips", "data-testid": "input-chips" });
  const images = attachImages(input);
  const until = createUntilBox();

  /** The completions picked since the last send (their blocks go with the prompt while their text is in it). */
  let picked: PickedMention[] = [];
  /** The user removed the focus chip: the next prompt goes without the editor's focus. */
  let focusRemoved = false;
  let draftNonce = 0;
  const completions = createCompletions(ui, input, (mention) => {
    picked.push(mention);
    drafts.save(input.value);
  });

  const renderChips = () => {
    const f = ui.state().focus;
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
  };

  const send = () => {
    const text = input.value.trim();
    if (!text) return;
    const mentions = picked.filter((p) => text.includes(p.text));
    const sent = images.take();
    const command = until.command();
    ui.post({
      type: "prompt",
      text,
      ...(mentions.length ? { mentions } : {}),
      ...(focusRemoved ? { noFocus: true } : {}),
      ...(sent.length ? { images: sent } : {}),
      ...(command ? { until: command } : {}),
    });
    onSend();
    input.value = "";
    picked = [];
    focusRemoved = false;
    completions.close();
    renderChips();
    drafts.save("");
  };

  input.value = drafts.load();
  sendButton.addEventListener("click", send);
  input.addEventListener("keydown", (e) => {
    if (completions.key(e)) return;
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      send();
    }
  });
  input.addEventListener("input", () => {
    drafts.save(input.value);
    completions.ask();
  });
  input.addEventListener("click", completions.ask);
  stopButton.addEventListener("click", () => ui.post({ type: "stop" }));
  undoButton.addEventListener("click", () => ui.post({ type: "undo" }));
  redoButton.addEventListener("click", () => ui.post({ type: "redo" }));

  const el = h(
    "footer",
    {},
    ...above.map((p) => p.el),
    chips,
    images.el,
    completions.el,
    input,
    until.el,
    h("div", { class: "row buttons" }, sendButton, stopButton, h("span", { class: "history" }, undoButton, redoButton)),
  );
  const render = () => {
    const state = ui.state();
    const s = state.session;
    const busy = s?.state === "running" || s?.state === "requires_action";
    stopButton.disabled = !busy;
    undoButton.disabled = !s || busy;
    redoButton.disabled = !s || busy;
    for (const p of above) p.render();
    renderChips();
    completions.render();
    if (state.draft && state.draft.nonce !== draftNonce) {
      draftNonce = state.draft.nonce;
      input.value = state.draft.text;
      input.focus();
    }
  };
  return { el, render };
}
