/**
 * Prompts from every door: the panel's input and Retry, "Ask", "Fix at Cursor", "Explain
 * Selection", and the history around them (Stop, Undo/Redo of the last prompt). A prompt carries
 * the editor's focus and its mentions' blocks; the server's commands open their session in the panel.
 */
import * as vscode from "vscode";
import { toWire } from "../diagnostics";
import { MentionSource, promptExtras } from "../editorContext";
import { typedPrompt } from "../promptText";
import { ServerCommands, type CommandTarget, type ImageBlock, type UndoResult } from "../shared/protocol";
import type { MentionItem, PickedMention, Trigger } from "../shared/mentions";
import { retryPrompt } from "../shared/reducer";
import { Commands } from "./commands";
import { command, requireActive, type Deps } from "./deps";

export interface Prompts {
  /**
   * A prompt with the editor's focus (unless `noFocus`: the user removed the chip) and its mentions'
   * blocks; `extra`: the panel's pasted or dropped images, and its "until green" command.
   */
  ask(text: string, picked?: PickedMention[], noFocus?: boolean, extra?: PanelExtras): Promise<unknown>;
  /** The last prompt sent again (after a failed turn). */
  retry(): Promise<void>;
  /** `@`/`#` completions for the panel's input. */
  complete(trigger: Trigger, query: string): Promise<MentionItem[]>;
  undo(): Promise<UndoResult>;
  redo(): Promise<unknown>;
}

export interface PanelExtras { images?: ImageBlock[]; until?: string }

export function register(context: vscode.ExtensionContext, { store, client, chat, forwarder, log }: Deps): Prompts {
  const mentionSource = new MentionSource(log);
  client.onCommandResult = (name, result) => {
    const sessionId = (result as { sessionId?: unknown } | null)?.sessionId;
    const starts = [ServerCommands.fix, ServerCommands.ask, ServerCommands.explain, ServerCommands.fixFinding] as string[];
    if (starts.includes(name) && typeof sessionId === "string") {
      store.follow(sessionId);
      void chat.reveal(true);
    }
  };

  const ask = async (text: string, picked: PickedMention[] = [], noFocus = false, extra: PanelExtras = {}) => {
    // issued while the server starts: wait for it (its capabilities come with it)
    await store.connected();
    forwarder.flush();
    // only the `#` names this server expands (an older one lists none)
    const { context: focus, blocks } = promptExtras(text, picked, { noFocus, mentions: client.capabilities?.mentions ?? [] });
    const until = extra.until ? { command: extra.until } : undefined;
    const result = await store.prompt(text, focus, [...blocks, ...(extra.images ?? [])], until);
    return { sessionId: store.activeId, ...result };
  };
  const retry = async () => {
    const again = retryPrompt(store.active());
    if (!again) throw new Error("there is no prompt to send again");
    await store.connected();
    forwarder.flush();
    const { context: focus } = promptExtras(again.text, [], { noFocus: false, mentions: [] });
    await store.prompt(again.text, focus, again.blocks);
  };
  const undo = async () => {
    const result = await client.executeServerCommand<UndoResult>(ServerCommands.undo, [{ sessionId: requireActive(store) }]);
    store.setDraft(typedPrompt(result?.prompt));
    return result;
  };
  const redo = () => client.executeServerCommand(ServerCommands.redo, [{ sessionId: requireActive(store) }]);

  async function runOnEditor(name: string, withDiagnostics: boolean) {
    const editor = vscode.window.activeTextEditor;
    if (!editor) throw new Error("no active editor");
    const range = editor.selection.isEmpty ? editor.document.lineAt(editor.selection.active.line).range : editor.selection;
    const args: CommandTarget = { uri: editor.document.uri.toString(), range: wireRange(range) };
    if (withDiagnostics) {
      args.diagnostics = vscode.languages.getDiagnostics(editor.document.uri).filter((d) => d.range.intersection(range)).map(toWire);
    }
    return client.executeServerCommand(name, [args]);
  }

  context.subscriptions.push(
    command(Commands.askPrompt, async (prompt?: unknown) => {
      const text = typeof prompt === "string" && prompt.trim() ? prompt : await vscode.window.showInputBox({ title: "Ask the agent", prompt: "What should the agent do?", ignoreFocusOut: true });
      if (!text) return undefined;
      await chat.reveal(true);
      return ask(text);
    }),
    command(Commands.fixAtCursor, () => runOnEditor(ServerCommands.fix, true)),
    command(Commands.explainSelection, () => runOnEditor(ServerCommands.explain, false)),
    command(Commands.stopSession, () => store.cancel()),
    command(Commands.undoLast, undo),
    command(Commands.redoLast, redo),
  );
  return {
    ask,
    retry,
    complete: (trigger, query) => mentionSource.complete(trigger, query, client.capabilities?.mentions ?? []),
    undo,
    redo,
  };
}

function wireRange(r: vscode.Range) {
  return { start: { line: r.start.line, character: r.start.character }, end: { line: r.end.line, character: r.end.character } };
}
