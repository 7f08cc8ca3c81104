/** The server as the user sees it: the status bar item, Restart Server and Show Log. */
import * as vscode from "vscode";
import { StatusBar } from "../statusBar";
import { Commands } from "./commands";
import { command, type Deps } from "./deps";

export function register(context: vscode.ExtensionContext, { store, client, log }: Deps): void {
  context.subscriptions.push(
    new StatusBar(store, Commands.openChat, Commands.showLog),
    command(Commands.restartServer, () => client.restart()),
    command(Commands.showLog, () => log.show()),
  );
}
