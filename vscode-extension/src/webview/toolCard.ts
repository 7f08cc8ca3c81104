/** A tool call's card in the transcript: its title, live status, command, locations and output. */
import type { ToolItem } from "../shared/reducer";
import { h } from "./dom";
import { highlight } from "./markdown";
import type { Ui } from "./ui";

const KIND_LABEL: Record<string, string> = { read: "read", edit: "edit", delete: "delete", move: "move", search: "search", execute: "run", think: "think", fetch: "fetch", other: "tool" };

export function renderTool(ui: Ui, t: ToolItem): HTMLElement {
  const status = t.status ?? "pending";
  const input = t.rawInput as Record<string, unknown> | undefined;
  const command = typeof input?.command === "string" ? input.command : undefined;
  const text = (t.content ?? []).map((c) => (c.type === "text" ? c.text : c.patch)).join("\n");
  const running = status === "in_progress" || status === "pending";
  // a command that exited non-zero is "completed" (the model read its output): say how it ended
  const exited = status === "completed" && t.exitCode !== undefined;
  const nonZero = exited && t.exitCode !== 0;
  const badge = exited ? `exit ${t.exitCode}` : status.replace("_", " ");
  return h(
    "div",
    { class: `tool status-${status}`, "data-testid": "tool-call", "data-tool-call-id": t.toolCallId, "data-status": status, "data-tool-name": t.toolName, "data-exit-code": exited ? String(t.exitCode) : undefined },
    h(
      "div",
      { class: "tool-head" },
      h("span", { class: "kind" }, KIND_LABEL[t.toolKind ?? "other"] ?? "tool"),
      h("span", { class: "tool-title", "data-testid": "tool-call-title" }, t.title || t.toolName || "tool"),
      h("span", { class: `badge ${nonZero ? "failed" : status}`, "data-testid": "tool-call-status" }, badge),
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
    text ? outputBlock(text, running || nonZero || status === "failed" || status === "interrupted", (t.content ?? []).some((c) => c.type === "diff")) : undefined,
  );
}

function outputBlock(text: string, open: boolean, isDiff: boolean): HTMLElement {
  const code = h("code", { class: "hljs" });
  code.innerHTML = highlight(text, isDiff ? "diff" : undefined);
  return h("details", { class: "output", open }, h("summary", {}, "Output"), h("pre", { "data-testid": "tool-call-output" }, code));
}
