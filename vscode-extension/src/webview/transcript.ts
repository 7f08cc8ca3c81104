/**
 * The conversation: user messages (with Rewind…), streamed answers, reasoning, tool cards,
 * notices and error cards. Each item is rebuilt only when the reducer replaced it.
 */
import { canRetry, revertedFrom, type ChatItem } from "../shared/reducer";
import type { ContentBlock, RevertScope } from "../shared/protocol";
import { copyButtons } from "./codeBlocks";
import { h } from "./dom";
import { linkCodeRefs } from "./links";
import { renderMarkdown } from "./markdown";
import { renderTool } from "./toolCard";
import type { Part, Ui } from "./ui";
import { isQueued } from "./view";

export interface Transcript extends Part {
  /** A prompt was just sent: bring it into view when it shows up. */
  follow(): void;
}

export function createTranscript(ui: Ui): Transcript {
  const el = h("main", { class: "transcript", "data-testid": "transcript", role: "log", "aria-label": "Conversation", "aria-relevant": "additions", tabindex: "0" });
  const rendered = new Map<string, { item: ChatItem; el: HTMLElement }>();
  let following = false;
  const render = () => {
    let sent: HTMLElement | undefined;
    const session = ui.state().session;
    const items = session?.items ?? [];
    const seen = new Set<string>();
    let previous: Element | null = null;
    const hiddenFrom = revertedFrom(session);
    for (const [index, item] of items.entries()) {
      seen.add(item.id);
      let entry = rendered.get(item.id);
      if (!entry || entry.item !== item) {
        const itemEl = renderItem(ui, item);
        if (item.kind === "user" && !entry) sent = itemEl;
        if (entry) entry.el.replaceWith(itemEl);
        entry = { item, el: itemEl };
        rendered.set(item.id, entry);
      }
      const expected: Element | null = previous ? previous.nextElementSibling : el.firstElementChild;
      if (expected !== entry.el) {
        if (previous) previous.after(entry.el);
        else el.prepend(entry.el);
      }
      entry.el.classList.toggle("reverted", hiddenFrom >= 0 && index >= hiddenFrom && item.kind !== "notice");
      if (item.kind === "text") entry.el.dataset.status = session?.messageStatus[item.messageId] ?? "streaming";
      if (item.kind === "error") {
        // Retry only on the latest error, once the session is idle
        const retry = entry.el.querySelector<HTMLButtonElement>("button.turn-error-retry");
        if (retry) retry.hidden = !(index === items.length - 1 && canRetry(session));
      }
      previous = entry.el;
    }
    for (const [id, entry] of rendered) {
      if (!seen.has(id)) {
        entry.el.remove();
        rendered.delete(id);
      }
    }
    const empty = el.querySelector<HTMLElement>(".empty");
    if (!items.length) {
      const text = session ? "Ask something to start." : "Ask anything below: your first prompt starts a session. Past sessions are in the list above.";
      if (!empty) el.append(h("div", { class: "empty", "data-testid": "empty-state" }, text));
      else if (empty.textContent !== text) empty.textContent = text;
    } else {
      empty?.remove();
    }
    if (following && sent) {
      following = false;
      sent.scrollIntoView({ block: "nearest" });
      el.scrollTop = el.scrollHeight;
    }
  };
  return { el, render, follow: () => void (following = true) };
}

function renderItem(ui: Ui, item: ChatItem): HTMLElement {
  switch (item.kind) {
    case "user":
      return h(
        "div",
        { class: "msg user", "data-testid": "message-user", "data-message-id": item.messageId, "data-state": item.state },
        isQueued(item) ? h("span", { class: "queued", "data-testid": "message-queued", title: "Sent while the agent works: it reads this when the current step ends" }, "Queued") : undefined,
        ...item.content.map((b) => renderBlock(ui, b)),
        rewindMenu(ui, item.messageId),
      );
    case "text": {
      const status = ui.state().session?.messageStatus[item.messageId];
      const el = h("div", { class: "msg assistant markdown", "data-testid": "message-assistant", "data-message-id": item.messageId, "data-status": status ?? "streaming" });
      el.innerHTML = renderMarkdown(item.text);
      linkCodeRefs(el, ui.openCodeRef);
      copyButtons(el);
      return el;
    }
    case "reasoning": {
      const body = h("div", { class: "markdown" });
      body.innerHTML = renderMarkdown(item.text);
      return h("details", { class: "msg reasoning", "data-testid": "message-reasoning", "data-message-id": item.messageId }, h("summary", {}, "Thinking"), body);
    }
    case "tool":
      return renderTool(ui, item);
    case "notice":
      return h("div", { class: "notice", "data-testid": "notice" }, item.text);
    case "error":
      return h(
        "div",
        { class: "turn-error", "data-testid": "turn-error", role: "alert" },
        h("span", { class: "turn-error-label" }, "Error: "),
        h("span", { class: "turn-error-message", "data-testid": "turn-error-message" }, item.text),
        h("button", { class: "turn-error-retry", "data-testid": "turn-error-retry", title: "Send your last prompt again", onclick: () => ui.post({ type: "retry" }) }, "Retry"),
      );
  }
}

function renderBlock(ui: Ui, block: ContentBlock): Node {
  if (block.type === "text" && block.text.startsWith("Editor context:\n")) {
    // what the server added from the editor (active document, selection, diagnostics)
    return h("details", { class: "context", "data-testid": "message-context" }, h("summary", {}, "Editor context"), h("pre", {}, block.text.slice(16)));
  }
  if (block.type === "text") {
    const el = h("div", { class: "markdown" });
    el.innerHTML = renderMarkdown(block.text);
    return el;
  }
  if (block.type === "image") {
    return h("img", { class: "attached-image", "data-testid": "message-image", src: `data:${block.mimeType};base64,${block.data}`, alt: block.name ?? "image", title: block.name ?? "image" });
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
    { class: "chip", href: "#", "data-testid": "message-link", "data-uri": uri, title: decodeURIComponent(uri), onclick: (e) => { e.preventDefault(); ui.post({ type: "openLocation", uri, range }); } },
    `↗ ${label}`,
  );
}

const REWIND_SCOPES: [RevertScope, string, string][] = [
  ["both", "Code and conversation", "Restore the files the agent changed since, and hide this message and the later ones"],
  ["code", "Code only", "Restore the files the agent changed since; the conversation stays"],
  ["conversation", "Conversation only", "Hide this message and the later ones; the files stay as they are"],
];

/** "Rewind…" under a user message: the three scopes of `agent/revert/stage`. Redo takes it back. */
function rewindMenu(ui: Ui, messageId: string): HTMLElement {
  const choices = h(
    "div",
    { class: "rewind-choices", "data-testid": "rewind-menu", hidden: true },
    ...REWIND_SCOPES.map(([scope, label, title]) =>
      h("button", { "data-testid": `rewind-${scope}`, title, onclick: () => { choices.hidden = true; ui.post({ type: "rewind", messageId, scope }); } }, label),
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
