/**
 * The panel and the server around it: the chat view, the editor focus it shows, the status bar,
 * the diagnostics the agent reads, Open Chat, Restart Server and Show Log.
 */
import * as vscode from "vscode";
import { CHAT_VIEW_ID } from "../chatView";
import { FocusTracker } from "../editorContext";
import { StatusBar } from "../statusBar";
import { Commands } from "./commands";
import { command, type Deps } from "./deps";

export function register(context: vscode.ExtensionContext, { store, client, chat, forwarder, log }: Deps): void {
  // the agent reads the latest diagnostics: sent before each command, and all after a (re)start
  client.beforeCommand = () => forwarder.flush();
  const listening = store.onMessage((msg) => {
    if (msg.type === "server" && msg.server.status === "running") forwarder.sendAll();
  });
  context.subscriptions.push(
    listening,
    new StatusBar(store, Commands.openChat, Commands.showLog),
    new FocusTracker(store),
    vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, chat),
    command(Commands.openChat, () => chat.reveal()),
    command(Commands.restartServer, () => client.restart()),
    command(Commands.showLog, () => log.show()),
  );
}
