/**
 * The status bar item: the active session's state, a click opens the panel; while the server
 * starts, "starting…" (commands wait for it); when it failed or stopped, why (a click shows the log).
 */
import * as vscode from "vscode";
import type { SessionStore } from "./sessions";
import { stateLabel, type ServerStatus } from "./shared/reducer";

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("lspAgent.status", vscode.StatusBarAlignment.Right, 100);
  private readonly subscription: vscode.Disposable;
  private server: ServerStatus;

  constructor(
    private readonly store: SessionStore,
    private readonly command: string,
    private readonly logCommand: string,
  ) {
    this.item.name = "LSP Agent";
    this.server = store.serverStatus;
    this.subscription = store.onMessage((msg) => {
      if (msg.type === "server") this.server = msg.server;
      this.render();
    });
    this.render();
    this.item.show();
  }

  private render(): void {
    const session = this.store.active();
    const { status, message } = this.server;
    this.item.command = status === "failed" || status === "stopped" ? this.logCommand : this.command;
    if (status === "starting") {
      this.item.text = "$(loading~spin) Agent: starting…";
      this.item.tooltip = "LSP Agent: the server is starting; commands issued now run once it is up";
      return;
    }
    if (status !== "running") {
      this.item.text = status === "failed" ? "$(error) Agent: not started" : "$(circle-slash) Agent: stopped";
      this.item.tooltip = `LSP Agent: ${message ?? (status === "failed" ? "the server failed to start" : "the server stopped")}. Click to show the log.`;
      return;
    }
    const label = stateLabel(session);
    const icon = session?.state === "running" ? "$(loading~spin)" : session?.state === "requires_action" ? "$(bell-dot)" : "$(comment-discussion)";
    this.item.text = `${icon} Agent: ${label}`;
    this.item.tooltip = session ? `LSP Agent — ${session.title || session.sessionId}: ${label}` : "LSP Agent: open the chat";
  }

  dispose(): void {
    this.subscription.dispose();
    this.item.dispose();
  }
}
