/** The chat panel: its view, the editor focus its chip shows, and Open Chat. */
import * as vscode from "vscode";
import { CHAT_VIEW_ID } from "../chatView";
import { FocusTracker } from "../editorContext";
import { Commands } from "./commands";
import { command, type Deps } from "./deps";

export function register(context: vscode.ExtensionContext, { store, chat }: Deps): void {
  context.subscriptions.push(
    new FocusTracker(store),
    vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, chat),
    command(Commands.openChat, () => chat.reveal()),
  );
}
