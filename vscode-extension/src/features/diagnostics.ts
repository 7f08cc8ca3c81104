/** The editor's diagnostics for the agent: what is pending is sent before each server command, everything after a (re)start. */
import * as vscode from "vscode";
import type { Deps } from "./deps";

export function register(context: vscode.ExtensionContext, { store, client, forwarder }: Deps): void {
  client.beforeCommand = () => forwarder.flush();
  context.subscriptions.push(
    store.onMessage((msg) => {
      if (msg.type === "server" && msg.server.status === "running") forwarder.sendAll();
    }),
  );
}
