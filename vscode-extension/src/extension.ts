/** Activation: the server, the side panel, the palette commands, the status bar, the diff view and the review. */
import * as vscode from "vscode";
import { AgentClient } from "./client";
import { ChatViewProvider, CHAT_VIEW_ID } from "./chatView";
import { openCodeRef } from "./codeRefLinks";
import { DiagnosticsForwarder, toWire } from "./diagnostics";
import { FocusTracker, MentionSource, promptExtras } from "./editorContext";
import { closeProposals, DIFF_SCHEME, editedProposals, PROPOSAL_SCHEME, ProposalFileSystem, ProposalProvider, showProposal } from "./diffProvider";
import { conflictMessage, ReviewStore } from "./review";
import { ReviewEditor } from "./reviewEditor";
import { LiveSearch, type SearchItem } from "./sessionSearch";
import { listApprovals, revokeApprovals } from "./approvals";
import { SessionStore } from "./sessions";
import { StatusBar } from "./statusBar";
import {
  Methods,
  ServerCommands,
  type CommandTarget,
  type RequestPermissionResult,
  type RevertScope,
  type ReviewAction,
  type SessionSummary,
  type UndoResult,
} from "./shared/protocol";
import type { PickedMention } from "./shared/mentions";
import { retryPrompt, type WebviewMessage } from "./shared/reducer";

/** Palette command ids: never one of the server's `lspAgent.*` (ServerCommands). */
export const Commands = {
  openChat: "lspAgent.openChat",
  newSession: "lspAgent.newSession",
  askPrompt: "lspAgent.askPrompt",
  fixAtCursor: "lspAgent.fixAtCursor",
  explainSelection: "lspAgent.explainSelection",
  stopSession: "lspAgent.stopSession",
  undoLast: "lspAgent.undoLast",
  redoLast: "lspAgent.redoLast",
  switchSession: "lspAgent.switchSession",
  searchSessions: "lspAgent.searchSessions",
  selectMode: "lspAgent.selectMode",
  selectModel: "lspAgent.selectModel",
  exportSession: "lspAgent.exportSession",
  restartServer: "lspAgent.restartServer",
  showLog: "lspAgent.showLog",
  savedApprovals: "lspAgent.savedApprovals",
  keepHunk: "lspAgent.keepHunk",
  undoHunk: "lspAgent.undoHunk",
  keepFile: "lspAgent.keepFile",
  undoFile: "lspAgent.undoFile",
  keepAll: "lspAgent.keepAll",
  undoAll: "lspAgent.undoAll",
} as const;

const ACTIVE_KEY = "lspAgent.activeSession";

export function activate(context: vscode.ExtensionContext) {
  const log = vscode.window.createOutputChannel("LSP Agent", { log: true });
  const store = new SessionStore(() => vscode.workspace.workspaceFolders?.[0]?.uri.toString());
  const client = new AgentClient(context, store, log);
  const reviews = new ReviewStore(store, () => (client.running ? client : undefined), () => client.capabilities?.review === true);
  const reviewEditor = new ReviewEditor(context.extensionUri, reviews, { keep: Commands.keepHunk, undo: Commands.undoHunk });
  const proposals = new ProposalFileSystem((m, p) => client.request(m, p));
  const chat = new ChatViewProvider(context.extensionUri, store, reviews, (msg) => onWebviewMessage(msg), log);
  const statusBar = new StatusBar(store, Commands.openChat, Commands.showLog);
  const focus = new FocusTracker(store);
  const mentionSource = new MentionSource(log);
  const forwarder = new DiagnosticsForwarder(
    (params) => client.notify(Methods.diagnostics.name, params),
    () => vscode.workspace.getConfiguration("lspAgent").get("forwardDiagnostics", true),
  );

  client.beforeCommand = () => forwarder.flush();
  client.onCommandResult = (command, result) => {
    const sessionId = (result as { sessionId?: unknown } | null)?.sessionId;
    if ((command === ServerCommands.fix || command === ServerCommands.ask || command === ServerCommands.explain) && typeof sessionId === "string") {
      store.follow(sessionId);
      void chat.reveal(true);
    }
  };
  let restoring = context.workspaceState.get<string>(ACTIVE_KEY);
  store.onMessage((msg) => {
    if (msg.type === "server" && msg.server.status === "running") {
      forwarder.sendAll();
      // after a window reload: rebuild the session that was open from agent/session/load
      const saved = restoring;
      restoring = undefined;
      if (saved && !store.activeId) void store.open(saved).catch((e) => log.warn(`reopening ${saved}: ${String(e)}`));
    }
    if (msg.type === "state" && store.activeId) void context.workspaceState.update(ACTIVE_KEY, store.activeId);
  });

  const requireActive = (): string => {
    if (!store.activeId) throw new Error("no active session: send a prompt first");
    return store.activeId;
  };
  const undo = async () => {
    const result = await client.executeServerCommand<UndoResult>(ServerCommands.undo, [{ sessionId: requireActive() }]);
    // the prompt as typed: without the editor context the server added to it
    const text = (result?.prompt ?? [])
      .filter((b) => b.type === "text" && !b.text.startsWith("Editor context:\n"))
      .map((b) => (b.type === "text" ? b.text : ""))
      .join("\n");
    store.setDraft(text);
    return result;
  };
  const redo = () => client.executeServerCommand(ServerCommands.redo, [{ sessionId: requireActive() }]);
  /** A prompt with the editor's focus (unless `noFocus`: the user removed the chip) and its mentions' blocks. */
  const ask = async (text: string, picked: PickedMention[] = [], noFocus = false) => {
    // issued while the server starts: wait for it (its capabilities come with it)
    await store.connected();
    forwarder.flush();
    // only the `#` names this server expands (an older one lists none)
    const { context, blocks } = promptExtras(text, picked, { noFocus, mentions: client.capabilities?.mentions ?? [] });
    const result = await store.prompt(text, context, blocks);
    return { sessionId: store.activeId, ...result };
  };

  async function onWebviewMessage(msg: WebviewMessage): Promise<void> {
    switch (msg.type) {
      case "prompt":
        await ask(msg.text, msg.mentions, msg.noFocus);
        return;
      case "complete":
        chat.send({ type: "completions", id: msg.id, items: await mentionSource.complete(msg.trigger, msg.query, client.capabilities?.mentions ?? []) });
        return;
      case "compact":
        await store.compact();
        return;
      case "stop":
        store.cancel();
        return;
      case "retry": {
        const again = retryPrompt(store.active());
        if (!again) throw new Error("there is no prompt to send again");
        await store.connected();
        forwarder.flush();
        const { context } = promptExtras(again.text, [], { noFocus: false, mentions: [] });
        await store.prompt(again.text, context, again.blocks);
        return;
      }
      case "newSession":
        await store.newSession();
        return;
      case "selectSession":
        await store.open(msg.sessionId);
        return;
      case "refreshSessions":
        await store.refreshSessions();
        return;
      case "searchSessions":
        await searchSessions("");
        return;
      case "undo":
        await undo();
        return;
      case "redo":
        await redo();
        return;
      case "setConfigOption":
        await store.setConfigOption(msg.configId, msg.value);
        return;
      case "permission":
        await answerPermission(msg.key, msg.optionId, msg.reason);
        return;
      case "viewDiff": {
        const pending = store.pendingPermission(msg.key);
        if (!pending) throw new Error("this permission request is no longer pending");
        await showProposal(pending.params.sessionId, pending.params.subject, msg.uri);
        return;
      }
      case "question":
        store.answerQuestion(msg.key, msg.result);
        return;
      case "openLocation":
        await openLocation(msg.uri, msg.range);
        return;
      case "openCodeRef":
        await openCodeRef(msg);
        return;
      case "resolve":
        await resolve(msg.action, { hunkIds: msg.hunkIds, uris: msg.uris });
        return;
      case "rewind":
        await rewind(msg.messageId, msg.scope);
        return;
      case "showLog":
        log.show();
        return;
    }
  }

  /** An answer from a permission card. An Allow of an edit sends the proposals the user changed. */
  async function answerPermission(key: string, optionId?: string, reason?: string) {
    const pending = store.pendingPermission(key);
    if (!pending) return;
    const { sessionId, subject, options } = pending.params;
    let result: RequestPermissionResult = { outcome: { outcome: "cancelled" } };
    if (optionId) {
      const allow = options.find((o) => o.optionId === optionId)?.kind.startsWith("allow") ?? false;
      const edited = allow ? editedProposals(proposals, sessionId, subject) : undefined;
      result = { outcome: { outcome: "selected", optionId, ...(reason ? { reason } : {}), ...(edited ? { modifiedContent: edited } : {}) } };
      if (edited) log.info(`allow with the user's text for ${Object.keys(edited).join(", ")}`);
    }
    store.answerPermission(key, result);
    if (subject?.type === "edit") await closeProposals(proposals, subject.changeSetId).catch((e) => log.warn(`closing the diff: ${String(e)}`));
  }

  async function resolve(action: ReviewAction, selection: { hunkIds?: string[]; uris?: string[] } = {}) {
    const result = await reviews.resolve(action, selection);
    const conflict = conflictMessage(action, result);
    if (conflict) void vscode.window.showWarningMessage(`LSP Agent: ${conflict}`);
    return result;
  }

  async function rewind(messageId: string, scope: RevertScope) {
    const result = await store.rewind(messageId, scope);
    if (!result.conflicts.length) return result;
    const names = result.conflicts.map((u) => vscode.Uri.parse(u).path.split("/").pop()).join(", ");
    const pick = await vscode.window.showWarningMessage(`LSP Agent: changed since, left as they are: ${names}.`, "Restore Anyway");
    return pick ? store.rewind(messageId, scope, true) : result;
  }

  /** A hunk id (from a CodeLens), a list of them, or none: the pending hunks under the cursor. */
  const hunkArgument = (arg: unknown): string[] => {
    const ids = typeof arg === "string" ? [arg] : Array.isArray(arg) ? arg.filter((x): x is string => typeof x === "string") : reviewEditor.hunksAtCursor();
    if (!ids.length) throw new Error("no pending change of the agent here");
    return ids;
  };
  /** A file (uri string or Uri, e.g. from the explorer), else the active editor's. */
  const fileArgument = (arg: unknown): string[] => {
    const uri = typeof arg === "string" ? vscode.Uri.parse(arg) : arg instanceof vscode.Uri ? arg : vscode.window.activeTextEditor?.document.uri;
    const file = uri && reviewEditor.file(uri);
    if (!file) throw new Error("no change of the agent to review in this file");
    return [file.uri];
  };

  const register = (id: string, f: (...args: any[]) => unknown) => vscode.commands.registerCommand(id, f);
  context.subscriptions.push(
    log,
    client,
    chat,
    statusBar,
    forwarder,
    focus,
    vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, chat),
    vscode.workspace.registerTextDocumentContentProvider(DIFF_SCHEME, new ProposalProvider((m, p) => client.request(m, p))),
    vscode.workspace.registerFileSystemProvider(PROPOSAL_SCHEME, proposals, { isCaseSensitive: true }),
    reviews,
    reviewEditor,
    vscode.languages.registerCodeLensProvider({ scheme: "file" }, reviewEditor),
    register(Commands.keepHunk, (arg?: unknown) => resolve("keep", { hunkIds: hunkArgument(arg) })),
    register(Commands.undoHunk, (arg?: unknown) => resolve("undo", { hunkIds: hunkArgument(arg) })),
    register(Commands.keepFile, (arg?: unknown) => resolve("keep", { uris: fileArgument(arg) })),
    register(Commands.undoFile, (arg?: unknown) => resolve("undo", { uris: fileArgument(arg) })),
    register(Commands.keepAll, () => resolve("keep")),
    register(Commands.undoAll, () => resolve("undo")),
    register(Commands.openChat, () => chat.reveal()),
    register(Commands.newSession, async () => {
      await chat.reveal(true);
      return store.newSession();
    }),
    register(Commands.askPrompt, async (prompt?: unknown) => {
      const text = typeof prompt === "string" && prompt.trim() ? prompt : await vscode.window.showInputBox({ title: "Ask the agent", prompt: "What should the agent do?", ignoreFocusOut: true });
      if (!text) return undefined;
      await chat.reveal(true);
      return ask(text);
    }),
    register(Commands.fixAtCursor, () => runOnEditor(ServerCommands.fix, true)),
    register(Commands.explainSelection, () => runOnEditor(ServerCommands.explain, false)),
    register(Commands.stopSession, () => store.cancel()),
    register(Commands.undoLast, undo),
    register(Commands.redoLast, redo),
    register(Commands.switchSession, async () => {
      const sessions = await store.refreshSessions();
      const pick = await vscode.window.showQuickPick(sessions.map(sessionItem), { title: "LSP Agent: sessions" });
      if (pick) {
        await chat.reveal(true);
        await store.open(pick.sessionId);
      }
    }),
    register(Commands.searchSessions, (query?: unknown) => searchSessions(typeof query === "string" ? query : "")),
    register(Commands.selectMode, () => pickConfig("mode")),
    register(Commands.selectModel, () => pickConfig("model")),
    register(Commands.exportSession, async () => {
      const result = await client.request<{ text: string }>(Methods.sessionExport.name, { sessionId: requireActive(), format: "markdown" });
      const doc = await vscode.workspace.openTextDocument({ language: "markdown", content: result.text });
      await vscode.window.showTextDocument(doc);
    }),
    register(Commands.restartServer, () => client.restart()),
    register(Commands.showLog, () => log.show()),
    register(Commands.savedApprovals, () => pickApprovals()),
  );

  /** Saved approvals of this workspace; the ones picked are revoked. */
  async function pickApprovals() {
    const request = <R>(method: string, params: unknown) => client.request<R>(method, params);
    const items = await listApprovals(request, vscode.workspace.workspaceFolders?.[0]?.uri.toString());
    if (!items.length) {
      void vscode.window.showInformationMessage("LSP Agent: no saved approvals for this workspace.");
      return 0;
    }
    const picked = await vscode.window.showQuickPick(items, { title: "LSP Agent: saved approvals — pick the ones to revoke", canPickMany: true });
    if (!picked?.length) return 0;
    const revoked = await revokeApprovals(request, picked.map((item) => item.approval));
    void vscode.window.showInformationMessage(`LSP Agent: revoked ${revoked} saved approval${revoked === 1 ? "" : "s"}; what they allowed is asked again.`);
    return revoked;
  }

  async function runOnEditor(command: string, withDiagnostics: boolean) {
    const editor = vscode.window.activeTextEditor;
    if (!editor) throw new Error("no active editor");
    const range = editor.selection.isEmpty ? editor.document.lineAt(editor.selection.active.line).range : editor.selection;
    const args: CommandTarget = { uri: editor.document.uri.toString(), range: wireRange(range) };
    if (withDiagnostics) {
      args.diagnostics = vscode.languages.getDiagnostics(editor.document.uri).filter((d) => d.range.intersection(range)).map(toWire);
    }
    return client.executeServerCommand(command, [args]);
  }

  /** A quick pick that searches every past session as you type; the chosen one opens in the panel. */
  async function searchSessions(initial: string) {
    const pick = vscode.window.createQuickPick<SearchItem>();
    const title = "LSP Agent: Search Sessions";
    const everywhere = { iconPath: new vscode.ThemeIcon("globe"), tooltip: "Search every workspace" };
    const here = { iconPath: new vscode.ThemeIcon("folder"), tooltip: "Search this workspace only" };
    let all = false;
    pick.title = title;
    pick.placeholder = 'Words from a prompt, an answer or a tool\'s output ("a phrase", prefix*)';
    pick.matchOnDescription = false;
    pick.matchOnDetail = false;
    pick.buttons = [everywhere];
    const live = new LiveSearch((query) => store.search(query, { everywhere: all }), {
      busy: (on) => (pick.busy = on),
      show: (items, query) => {
        pick.title = title;
        pick.items = items;
        if (!items.length && query.trim()) pick.title = `${title}: nothing found${all ? "" : " in this workspace"}`;
      },
      fail: (message) => {
        pick.items = [];
        pick.title = `${title}: ${message}`;
      },
    });
    const chosen = new Promise<SearchItem | undefined>((resolve) => {
      pick.onDidChangeValue((value) => live.update(value));
      pick.onDidTriggerButton((button) => {
        all = button === everywhere;
        pick.buttons = [all ? here : everywhere];
        live.update(pick.value);
      });
      pick.onDidAccept(() => {
        resolve(pick.selectedItems[0]);
        pick.hide();
      });
      pick.onDidHide(() => resolve(undefined));
    });
    pick.value = initial;
    pick.show();
    if (initial) live.update(initial);
    const item = await chosen;
    live.dispose();
    pick.dispose();
    if (!item) return undefined;
    await chat.reveal(true);
    await store.open(item.sessionId);
    return item.sessionId;
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

  client.start().catch((error) => log.error(String(error)));
  return { store, client, reviews };
}

export function deactivate(): void {
  // the client is disposed through context.subscriptions
}

function wireRange(r: vscode.Range) {
  return { start: { line: r.start.line, character: r.start.character }, end: { line: r.end.line, character: r.end.character } };
}

function sessionItem(s: SessionSummary) {
  return { label: s.title || "(untitled)", description: s.state === "idle" ? "" : s.state, detail: new Date(s.updatedAt).toLocaleString(), sessionId: s.sessionId };
}

async function openLocation(uri: string, range?: { start: { line: number; character: number }; end: { line: number; character: number } }) {
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(uri));
  const selection = range ? new vscode.Range(range.start.line, range.start.character, range.end.line, range.end.character) : undefined;
  await vscode.window.showTextDocument(doc, { selection, preview: true });
}
