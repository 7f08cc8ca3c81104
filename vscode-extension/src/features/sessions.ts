/**
 * Sessions from the palette: New, Switch, Export, the mode and model pickers; and after a window
 * reload, the session that was open is opened again. A new session never hides the shown one's
 * pending changes without asking: the Changes section and the CodeLenses follow the shown session.
 */
import * as vscode from "vscode";
import { waitingReview, waitingText } from "../review";
import { Methods, type SessionSummary } from "../shared/protocol";
import { Commands } from "./commands";
import { command, requireActive, type Deps } from "./deps";
import type { Review } from "./review";

const ACTIVE_KEY = "lspAgent.activeSession";

export interface Sessions {
  /** A new session, after asking what to do with the shown session's pending changes (undefined: the user cancelled). */
  newSession(): Promise<string | undefined>;
}

/** The answers to "start a new session while changes wait for review". */
export const LeaveReview = { keep: "Keep All, Then Start", undo: "Undo All, Then Start", later: "Review Them Later" } as const;
/** The notification's button that goes back to the session whose changes wait. */
export const SHOW_WAITING = "Show Them";

export function register(context: vscode.ExtensionContext, { store, client, chat, log, reviews }: Deps, review: Review): Sessions {
  let restoring = context.workspaceState.get<string>(ACTIVE_KEY);
  const listening = store.onMessage((msg) => {
    if (msg.type === "server" && msg.server.status === "running") {
      // after a window reload: rebuild the session that was open from agent/session/load
      const saved = restoring;
      restoring = undefined;
      if (saved && !store.activeId) void store.open(saved).catch((e) => log.warn(`reopening ${saved}: ${String(e)}`));
    }
    if (msg.type === "state" && store.activeId) void context.workspaceState.update(ACTIVE_KEY, store.activeId);
  });

  async function newSession(): Promise<string | undefined> {
    const previous = store.activeId;
    const waiting = waitingReview(reviews.snapshot(), previous);
    if (!previous || !waiting) return store.newSession();
    const title = store.active()?.title || "The current session";
    const choice = await vscode.window.showWarningMessage(
      `${title}: ${waitingText(waiting)} wait for Keep or Undo.`,
      { modal: true, detail: "A new session shows only its own changes. Changes left for later stay with their session: switch back to it to review them." },
      LeaveReview.keep,
      LeaveReview.undo,
      LeaveReview.later,
    );
    if (!choice) return undefined;
    if (choice !== LeaveReview.later) await review.resolve(choice === LeaveReview.keep ? "keep" : "undo");
    const sessionId = await store.newSession();
    if (choice === LeaveReview.later) {
      void vscode.window
        .showInformationMessage(`LSP Agent: ${waitingText(waiting)} of "${title}" wait for Keep or Undo.`, SHOW_WAITING)
        .then((pick) => (pick ? chat.reveal(true).then(() => store.open(previous)) : undefined));
    }
    return sessionId;
  }

  async function pickConfig(configId: "mode" | "model") {
    const option = store.active()?.configOptions.find((o) => o.configId === configId);
    if (!option) throw new Error("no active session");
    const pick = await vscode.window.showQuickPick(
      option.options.map((o) => ({ label: o.name, description: o.value === option.currentValue ? "current" : o.value, detail: o.description ?? undefined, value: o.value })),
      { title: `LSP Agent: ${option.name}` },
    );
    if (pick) await store.setConfigOption(configId, pick.value);
  }

  context.subscriptions.push(
    listening,
    command(Commands.newSession, async () => {
      await chat.reveal(true);
      return newSession();
    }),
    command(Commands.switchSession, async () => {
      const sessions = await store.refreshSessions();
      const pick = await vscode.window.showQuickPick(sessions.map(sessionItem), { title: "LSP Agent: sessions" });
      if (pick) {
        await chat.reveal(true);
        await store.open(pick.sessionId);
      }
    }),
    command(Commands.selectMode, () => pickConfig("mode")),
    command(Commands.selectModel, () => pickConfig("model")),
    command(Commands.exportSession, async () => {
      const result = await client.request<{ text: string }>(Methods.sessionExport.name, { sessionId: requireActive(store), format: "markdown" });
      const doc = await vscode.workspace.openTextDocument({ language: "markdown", content: result.text });
      await vscode.window.showTextDocument(doc);
    }),
  );
  return { newSession };
}

function sessionItem(s: SessionSummary) {
  return { label: s.title || "(untitled)", description: s.state === "idle" ? "" : s.state, detail: new Date(s.updatedAt).toLocaleString(), sessionId: s.sessionId };
}
