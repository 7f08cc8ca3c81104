/**
 * What the features share: made once by `activate` and handed to each feature's `register`, so a
 * feature names what it uses and never reaches for another feature's internals.
 */
import * as vscode from "vscode";
import { AgentClient } from "../client";
import { ChatViewProvider } from "../chatView";
import { DiagnosticsForwarder } from "../diagnostics";
import { ReviewStore } from "../review";
import { SessionStore } from "../sessions";
import { Methods } from "../shared/protocol";
import type { WebviewMessage } from "../shared/reducer";

export interface Deps {
  log: vscode.LogOutputChannel;
  store: SessionStore;
  client: AgentClient;
  reviews: ReviewStore;
  chat: ChatViewProvider;
  forwarder: DiagnosticsForwarder;
}

/**
 * The shared objects, with their disposables in `context.subscriptions`. `onWebviewMessage` is
 * the panel's router (built after the features, so it is looked up late).
 */
export function createDeps(context: vscode.ExtensionContext, onWebviewMessage: () => (msg: WebviewMessage) => Promise<void>): Deps {
  const log = vscode.window.createOutputChannel("LSP Agent", { log: true });
  const store = new SessionStore(() => vscode.workspace.workspaceFolders?.[0]?.uri.toString());
  const client = new AgentClient(context, store, log);
  const reviews = new ReviewStore(store, () => (client.running ? client : undefined), () => client.capabilities?.review === true);
  const chat = new ChatViewProvider(context.extensionUri, store, reviews, (msg) => onWebviewMessage()(msg), log);
  const forwarder = new DiagnosticsForwarder(
    (params) => client.notify(Methods.diagnostics.name, params),
    () => vscode.workspace.getConfiguration("lspAgent").get("forwardDiagnostics", true),
  );
  context.subscriptions.push(log, client, chat, reviews, forwarder);
  return { log, store, client, reviews, chat, forwarder };
}

/** The active session's id, or an error the user reads. */
export function requireActive(store: SessionStore): string {
  if (!store.activeId) throw new Error("no active session: send a prompt first");
  return store.activeId;
}

/** `vscode.commands.registerCommand` for a feature's commands (args come from the palette, CodeLenses or menus). */
export const command = (id: string, f: (...args: any[]) => unknown): vscode.Disposable => vscode.commands.registerCommand(id, f);
