/**
 * A tool call's card in the transcript: the tool's own title for the call (the server sends it
 * from `pending` on; else the tool's name), its live status (a refused call is "refused", not a
 * red failure), the command when the title does not already say it, locations and output.
 */
import type { ToolItem } from "../shared/reducer";
import { copyButtons } from "./codeBlocks";
import { h } from "./dom";
import { highlight } from "./markdown";
import type { Ui } from "./ui";
import { toolBadge, toolRefused, toolTitle } from "./view";

export function renderTool(ui: Ui, t: ToolItem): HTMLElement {
  const status = t.status ?? "pending";
  const title = toolTitle(t);
  const input = t.rawInput as Record<string, unknown> | undefined;
  const command = typeof input?.command === "string" && !title.includes(input.command.trim()) ? input.command : undefined;
  const text = (t.content ?? []).map((c) => (c.type === "text" ? c.text : c.patch)).join("\n");
  const running = status === "in_progress" || status === "pending";
  const exited = status === "completed" && t.exitCode !== undefined;
  const badge = toolBadge(t);
  const refused = toolRefused(t);
  return h(
    "div",
    {
      class: `tool status-${status}${refused ? " refused" : ""}`,
      role: "article",
      "aria-label": `${title}: ${badge.label}`,
      "data-testid": "tool-call",
      "data-tool-call-id": t.toolCallId,
      "data-status": status,
      "data-tool-name": t.toolName,
      "data-kind": t.toolKind,
      "data-refused": refused ? "true" : undefined,
      "data-exit-code": exited ? String(t.exitCode) : undefined,
    },
    h(
      "div",
      { class: "tool-head" },
      h("span", { class: "tool-title", "data-testid": "tool-call-title" }, title),
      h("span", { class: `badge tone-${badge.tone}`, "data-testid": "tool-call-status", "data-tone": badge.tone }, badge.label),
    ),
    command ? h("pre", { class: "command" }, h("code", {}, `$ ${command}`)) : undefined,
    ...(t.locations ?? []).map((loc) =>
      h(
        "a",
        { class: "location", href: "#", "data-testid": "tool-call-location", onclick: (e) => { e.preventDefault(); ui.post({ type: "openLocation", uri: loc.uri, range: loc.range }); } },
        `${loc.uri.split("/").pop()}${loc.range ? `:${loc.range.start.line + 1}` : ""}`,
      ),
    ),
    t.permission
      ? h(
          "div",
          { class: "perm-state", "data-testid": "tool-call-permission", "data-modified": t.permission.modified ? "true" : undefined },
          `permission ${t.permission.state}${t.permission.modified ? " with your edit" : ""}${t.permission.reason ? `: ${t.permission.reason}` : ""}`,
        )
      : undefined,
    text ? outputBlock(text, running || badge.tone === "error", (t.content ?? []).some((c) => c.type === "diff")) : undefined,
  );
}

function outputBlock(text: string, open: boolean, isDiff: boolean): HTMLElement {
  const code = h("code", { class: "hljs" });
  code.innerHTML = highlight(text, isDiff ? "diff" : undefined);
  const block = h("details", { class: "output", open }, h("summary", {}, "Output"), h("pre", { "data-testid": "tool-call-output" }, code));
  copyButtons(block);
  return block;
}
