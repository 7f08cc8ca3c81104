/**
 * Sessions from the palette: New, Switch, Export, the mode and model pickers; and after a window
 * reload, the session that was open is opened again.
 */
import * as vscode from "vscode";
import { Methods, type SessionSummary } from "../shared/protocol";
import { Commands } from "./commands";
import { command, requireActive, type Deps } from "./deps";

const ACTIVE_KEY = "lspAgent.activeSession";

export interface Sessions {
  newSession(): Promise<string>;
}

export function register(context: vscode.ExtensionContext, { store, client, chat, log }: Deps): Sessions {
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

  const newSession = () => store.newSession();

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
