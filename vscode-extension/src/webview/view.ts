/**
 * The words and tones the page shows for a state, as pure functions (no DOM: unit-tested in
 * test/unit/webviewView.test.ts): a tool card's title and badge, the working indicator, what a
 * permission card says.
 */
import type { ChatState, SessionView, ToolItem, UserItem } from "../shared/reducer";
import type { ConfigOption, RequestPermissionParams } from "../shared/protocol";

/** The mode or model picker's option: the session's, else (before the first session) the server's choices. */
export function pickerOption(state: ChatState, configId: "mode" | "model"): ConfigOption | undefined {
  const options = state.session?.configOptions.length ? state.session.configOptions : state.configOptions ?? [];
  return options.find((o) => o.configId === configId);
}

/** The tool's own words for the call ("Run python3 hello.py", "Edit src/app.py"), else its name. */
export function toolTitle(t: ToolItem): string {
  return t.title?.trim() || t.toolName || "tool";
}

/** How a badge looks: `refused` is neutral (a choice, not a failure), `error` is red. */
export type Tone = "neutral" | "running" | "ok" | "error";

export function toolRefused(t: ToolItem): boolean {
  return !!t.refused || t.permission?.state === "rejected";
}

/** The card's status badge: a command's exit status, "refused" for a call someone refused. */
export function toolBadge(t: ToolItem): { label: string; tone: Tone } {
  const status = t.status ?? "pending";
  if (status === "completed" && t.exitCode !== undefined) return { label: `exit ${t.exitCode}`, tone: t.exitCode === 0 ? "ok" : "error" };
  if ((status === "failed" || status === "cancelled") && toolRefused(t)) return { label: "refused", tone: "neutral" };
  switch (status) {
    case "pending":
      return { label: "pending", tone: "running" };
    case "in_progress":
      return { label: "running", tone: "running" };
    case "completed":
      return { label: "done", tone: "ok" };
    case "cancelled":
      return { label: "cancelled", tone: "neutral" };
    default:
      return { label: status.replace("_", " "), tone: "error" };
  }
}

/** The working indicator's text while a turn runs; undefined when nothing runs. */
export function workingLabel(s: SessionView | undefined): string | undefined {
  if (!s) return undefined;
  if (s.state === "requires_action") return "Waiting for your answer…";
  if (s.state !== "running") return undefined;
  if (s.compacting) return "Compacting the conversation…";
  if (s.error?.retryAt) return "Retrying…";
  return "Working…";
}

/** A prompt typed during a turn waits ("Queued") until the server promotes it into the conversation. */
export function isQueued(item: UserItem): boolean {
  return item.state === "admitted";
}

/**
 * What a permission card says: a heading in plain words, the model's description when it adds
 * something, and the command (once) or the URL. The ask's title repeats the command, and the
 * description often repeats the title, so each is shown only when it says something new.
 */
export function permissionText(p: RequestPermissionParams): { heading: string; description?: string; command?: string } {
  const title = p.title.trim();
  const description = p.description?.trim() || undefined;
  const subject = p.subject;
  if (subject?.type === "command") {
    const command = subject.command.trim();
    return { heading: "Run this command?", command, ...(description && squash(description) !== squash(command) ? { description } : {}) };
  }
  const heading = title || `Allow ${p.permission}?`;
  return { heading, ...(description && squash(description) !== squash(heading) ? { description } : {}) };
}

const squash = (text: string) => text.replace(/\s+/g, " ").trim().toLowerCase();
