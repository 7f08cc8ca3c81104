/**
 * The review of the agent's changes in the editor: the CodeLenses and gutter marks of the pending
 * hunks, and Keep/Undo per change, per file or for all (palette, CodeLens, explorer menu, panel);
 * plus Rewind…, which takes a prompt's changes back.
 */
import * as vscode from "vscode";
import { conflictMessage } from "../review";
import { ReviewEditor } from "../reviewEditor";
import type { ReviewAction, ReviewResolveResult, RevertScope, RevertStageResult } from "../shared/protocol";
import { Commands } from "./commands";
import { command, type Deps } from "./deps";

export interface Review {
  /** Keeps or undoes hunks of the active session; a conflict is told in a warning. */
  resolve(action: ReviewAction, selection?: { hunkIds?: string[]; uris?: string[]; reason?: string }): Promise<ReviewResolveResult>;
  /** Rewinds to before a user message; files changed since are restored only when the user says so. */
  rewind(messageId: string, scope: RevertScope): Promise<RevertStageResult>;
}

export function register(context: vscode.ExtensionContext, { store, reviews }: Deps): Review {
  const reviewEditor = new ReviewEditor(context.extensionUri, reviews, { keep: Commands.keepHunk, undo: Commands.undoHunk, comment: Commands.commentHunk });

  async function resolve(action: ReviewAction, selection: { hunkIds?: string[]; uris?: string[]; reason?: string } = {}) {
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

  context.subscriptions.push(
    reviewEditor,
    vscode.languages.registerCodeLensProvider({ scheme: "file" }, reviewEditor),
    command(Commands.keepHunk, (arg?: unknown) => resolve("keep", { hunkIds: hunkArgument(arg) })),
    command(Commands.undoHunk, (arg?: unknown) => resolve("undo", { hunkIds: hunkArgument(arg) })),
    command(Commands.keepFile, (arg?: unknown) => resolve("keep", { uris: fileArgument(arg) })),
    command(Commands.undoFile, (arg?: unknown) => resolve("undo", { uris: fileArgument(arg) })),
    command(Commands.keepAll, () => resolve("keep")),
    command(Commands.undoAll, () => resolve("undo")),
  );
  return { resolve, rewind };
}
