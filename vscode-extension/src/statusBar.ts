/** The status bar item: the active session's state; a click opens the panel. */
import * as vscode from "vscode";
import type { SessionStore } from "./sessions";
import { stateLabel } from "./shared/reducer";

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("lspAgent.status", vscode.StatusBarAlignment.Right, 100);
  private readonly subscription: vscode.Disposable;
  private server = "starting";

  constructor(private readonly store: SessionStore, command: string) {
    this.item.name = "LSP Agent";
    this.item.command = command;
    this.subscription = store.onMessage((msg) => {
      if (msg.type === "server") this.server = msg.server.status;
      this.render();
    });
    this.render();
    this.item.show();
  }

  private render(): void {
    const session = this.store.active();
    if (this.server !== "running") {
      this.item.text = this.server === "failed" ? "$(error) Agent: not started" : `$(circle-slash) Agent: ${this.server}`;
      this.item.tooltip = "LSP Agent: the server is not running (see LSP Agent: Show Log)";
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
