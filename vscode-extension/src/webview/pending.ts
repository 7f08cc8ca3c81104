/** The permission and question cards, pinned below the transcript until they are answered. */
import type { PendingPermission, PendingQuestion } from "../shared/reducer";
import type { AskQuestionResult, PermissionOptionKind } from "../shared/protocol";
import { h } from "./dom";
import type { Part, Ui } from "./ui";
import { permissionText } from "./view";

export function createPending(ui: Ui): Part {
  const el = h("section", { class: "pending", "data-testid": "pending", "aria-label": "Waiting for your answer" });
  const cards = new Map<string, HTMLElement>();
  const render = () => {
    const state = ui.state();
    const active = state.session?.sessionId;
    const wanted = new Map<string, () => HTMLElement>();
    for (const p of state.permissions) if (!active || p.params.sessionId === active) wanted.set(p.key, () => permissionCard(ui, p));
    for (const q of state.questions) if (!active || q.params.sessionId === active) wanted.set(q.key, () => questionCard(ui, q));
    for (const [key, card] of cards) {
      if (!wanted.has(key)) {
        card.remove();
        cards.delete(key);
      }
    }
    for (const [key, make] of wanted) {
      if (!cards.has(key)) {
        const card = make();
        cards.set(key, card);
        el.append(card);
      }
    }
  };
  return { el, render };
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

function permissionCard(ui: Ui, p: PendingPermission): HTMLElement {
  const { params } = p;
  const answer = (optionId?: string, reason?: string) => ui.post({ type: "permission", key: p.key, optionId, reason });
  const option = (kind: PermissionOptionKind) => params.options.find((o) => o.kind === kind);
  const subject = params.subject;
  const said = permissionText(params);
  const titleId = `permission-${p.key.replace(/[^\w-]/g, "_")}`;
  const details: (Node | undefined)[] = [];
  if (said.command) details.push(h("pre", { class: "command", "data-testid": "permission-command" }, h("code", {}, `$ ${said.command}`)));
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
          h("button", { "data-testid": "permission-view-diff", "data-uri": f.uri, onclick: () => ui.post({ type: "viewDiff", key: p.key, uri: f.uri }) }, "View diff"),
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
    { class: "card permission", role: "region", "aria-labelledby": titleId, "data-testid": "permission-card", "data-key": p.key, "data-permission": params.permission, "data-tool-call-id": params.toolCallId },
    h("div", { class: "card-title", id: titleId, "data-testid": "permission-title" }, said.heading),
    said.description ? h("div", { class: "desc", "data-testid": "permission-description" }, said.description) : undefined,
    ...details,
    savedPatterns(params),
    h("div", { class: "row buttons" }, ...buttons),
    reasonBox,
  );
}

function questionCard(ui: Ui, q: PendingQuestion): HTMLElement {
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
  const answer = (result: AskQuestionResult) => ui.post({ type: "question", key: q.key, result });
  return h(
    "div",
    { class: "card question-card", role: "region", "aria-label": "A question from the agent", "data-testid": "question-card", "data-key": q.key },
    ...blocks,
    h(
      "div",
      { class: "row buttons" },
      h("button", { class: "primary", "data-testid": "question-submit", onclick: () => answer({ outcome: "answered", answers: Object.fromEntries(getters.map((g) => g())) }) }, "Answer"),
      h("button", { "data-testid": "question-decline", onclick: () => answer({ outcome: "declined" }) }, "Decline"),
    ),
  );
}
