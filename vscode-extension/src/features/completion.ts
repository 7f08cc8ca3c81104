/**
 * Inline completion and next-edit suggestions in the editor (issue 36). The ghost text itself is
 * vscode-languageclient's: it registers VS Code's inline completion provider when the server
 * advertises `inlineCompletionProvider` (only with `completion.enabled`), and VS Code's Tab
 * accepts it; an accepted item runs its command, `lsp-agent.inlineCompletionAccepted`, which
 * reports `agent/nextEdit/feedback`. The next-edit suggestion (`agent/nextEdit`, asked when the
 * edits pause and when an agent edit lands) is drawn here: the replaced text struck through, the
 * new text after it, a gutter mark; Tab jumps to it then accepts it, Escape dismisses it
 * (`lspAgent.nextEditVisible` enables both keys). The decisions live in `../nextEdit.ts`.
 */
import * as vscode from "vscode";
import { acceptedId, NextEditController, shownText, type NextEditHost } from "../nextEdit";
import { ClientCommands, Methods, type NextEditFeedbackParams, type NextEditParams, type NextEditResult } from "../shared/protocol";
import { Commands } from "./commands";
import { command, type Deps } from "./deps";

/** The `when` context key of the Tab and Escape bindings (package.json). */
export const VISIBLE_CONTEXT = "lspAgent.nextEditVisible";

export function register(context: vscode.ExtensionContext, { client, store, log }: Deps): void {
  const removed = vscode.window.createTextEditorDecorationType({
    textDecoration: "line-through",
    backgroundColor: new vscode.ThemeColor("diffEditor.removedTextBackground"),
  });
  const added = vscode.window.createTextEditorDecorationType({
    gutterIconPath: vscode.Uri.joinPath(context.extensionUri, "media", "next-edit.svg"),
    gutterIconSize: "contain",
    overviewRulerColor: new vscode.ThemeColor("editorOverviewRuler.modifiedForeground"),
    overviewRulerLane: vscode.OverviewRulerLane.Right,
  });
  const feedback = (id: string, accepted: boolean) => {
    const params: NextEditFeedbackParams = { id, accepted };
    client.notify(Methods.nextEditFeedback.name, params);
  };
  const editorOf = (uri: string) => vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === uri);
  const documentOf = (uri: string) => vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri);
  const toRange = (s: NextEditResult) => new vscode.Range(s.range.start.line, s.range.start.character, s.range.end.line, s.range.end.character);

  const host: NextEditHost = {
    cursor() {
      const editor = vscode.window.activeTextEditor;
      if (!editor || editor.document.uri.scheme !== "file") return undefined;
      const p = editor.selection.active;
      return { uri: editor.document.uri.toString(), version: editor.document.version, position: { line: p.line, character: p.character } };
    },
    version: (uri) => documentOf(uri)?.version,
    async request(params: NextEditParams, token) {
      const source = new vscode.CancellationTokenSource();
      token.onCancelled(() => source.cancel());
      try {
        return await client.request<NextEditResult | null>(Methods.nextEdit.name, params, source.token);
      } finally {
        source.dispose();
      }
    },
    feedback,
    show(s) {
      const editor = editorOf(s.uri);
      if (editor) {
        const range = toRange(s);
        const hover = new vscode.MarkdownString(`**LSP Agent** suggests: ${s.reason || "this edit"}\n\nTab: go to it, Tab again: accept · Escape: dismiss`);
        editor.setDecorations(removed, range.isEmpty ? [] : [{ range, hoverMessage: hover }]);
        editor.setDecorations(added, [{ range: new vscode.Range(range.end, range.end), hoverMessage: hover, renderOptions: { after: afterText(s.newText) } }]);
      }
      void vscode.commands.executeCommand("setContext", VISIBLE_CONTEXT, true);
    },
    hide() {
      for (const editor of vscode.window.visibleTextEditors) {
        editor.setDecorations(removed, []);
        editor.setDecorations(added, []);
      }
      void vscode.commands.executeCommand("setContext", VISIBLE_CONTEXT, false);
    },
    reveal(s) {
      const editor = vscode.window.activeTextEditor;
      if (!editor || editor.document.uri.toString() !== s.uri) return;
      const range = toRange(s);
      editor.selection = new vscode.Selection(range.start, range.start);
      editor.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    },
    async apply(s, version) {
      const document = documentOf(s.uri);
      if (!document || document.version !== version) return false;
      const edit = new vscode.WorkspaceEdit();
      edit.replace(document.uri, toRange(s), s.newText);
      return vscode.workspace.applyEdit(edit);
    },
    setTimer: (f, ms) => setTimeout(f, ms),
    clearTimer: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  };
  // asked only of a server that serves completions (`completion.enabled`: it advertises inlineCompletionProvider)
  const controller = new NextEditController(host, () => client.serverCapabilities?.inlineCompletionProvider !== undefined);

  context.subscriptions.push(
    removed,
    added,
    { dispose: () => controller.dispose() },
    vscode.commands.registerCommand(ClientCommands.inlineCompletionAccepted, (...args: unknown[]) => {
      const id = acceptedId(args);
      if (id) feedback(id, true);
      else log.warn(`${ClientCommands.inlineCompletionAccepted} without an id: ${JSON.stringify(args).slice(0, 200)}`);
    }),
    command(Commands.acceptNextEdit, async () => {
      const outcome = await controller.tab();
      // nothing (left) to jump to or accept: Tab does what it always does
      if (outcome === "none" || outcome === "dropped") await vscode.commands.executeCommand("tab");
    }),
    command(Commands.dismissNextEdit, () => controller.escape()),
    vscode.workspace.onDidChangeTextDocument((e) => {
      if (e.contentChanges.length && e.document.uri.scheme === "file") controller.edited(e.document.uri.toString());
    }),
    vscode.window.onDidChangeActiveTextEditor((editor) => controller.activeChanged(editor?.document.uri.toString())),
    store.onMessage((msg) => {
      if (msg.type === "update" && msg.params.update.sessionUpdate === "review_update") controller.agentEdited();
    }),
  );
}

/** The new text beside the old (see `shownText`), in the ghost text's colour on the inserted-text background. */
function afterText(newText: string): vscode.ThemableDecorationAttachmentRenderOptions {
  return {
    contentText: shownText(newText),
    color: new vscode.ThemeColor("editorGhostText.foreground"),
    backgroundColor: new vscode.ThemeColor("diffEditor.insertedTextBackground"),
    margin: "0 0 0 0.5em",
  };
}
