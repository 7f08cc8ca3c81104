/**
 * What of the editor goes with a prompt: the focus (the active file editor, its cursor and
 * selection; the panel's chip follows it while `lspAgent.sendFocus` is on) and the mentions'
 * completions and blocks (`@` workspace files and symbols, `#` the names the server expands).
 * The decisions are in shared/focus.ts and shared/mentions.ts; this reads VS Code.
 */
import * as fs from "fs";
import * as vscode from "vscode";
import { focusChip, focusContext, type EditorFocus } from "./shared/focus";
import { hashItems, mentionBlocks, rankPaths, wantsSelection, type MentionItem, type PickedMention, type Trigger } from "./shared/mentions";
import type { ContentBlock, PromptContext } from "./shared/protocol";
import { gitListFiles } from "./safeGit";
import type { SessionStore } from "./sessions";

const FILES_TTL_MS = 5000;
const MAX_FILES = 50_000;

/** The active file editor of this workspace as an `EditorFocus`, else undefined. */
export function currentFocus(): EditorFocus | undefined {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.uri.scheme !== "file" || !vscode.workspace.getWorkspaceFolder(editor.document.uri)) return undefined;
  const sel = editor.selection;
  const focus: EditorFocus = {
    uri: editor.document.uri.toString(),
    path: vscode.workspace.asRelativePath(editor.document.uri, false),
    cursor: { line: sel.active.line, character: sel.active.character },
  };
  if (!sel.isEmpty) {
    focus.selection = { start: { line: sel.start.line, character: sel.start.character }, end: { line: sel.end.line, character: sel.end.character } };
    focus.selectedText = editor.document.getText(sel);
  }
  return focus;
}

const sendFocusSetting = () => vscode.workspace.getConfiguration("lspAgent").get<boolean>("sendFocus", true);

/** Keeps the panel's focus chip in step with the editor (and with `lspAgent.sendFocus`). */
export class FocusTracker implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[];
  private timer?: ReturnType<typeof setTimeout>;

  constructor(private readonly store: SessionStore) {
    const later = () => this.schedule();
    this.disposables = [
      vscode.window.onDidChangeActiveTextEditor(later),
      vscode.window.onDidChangeTextEditorSelection(later),
      vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration("lspAgent.sendFocus") && later()),
    ];
    this.update();
  }

  private schedule(): void {
    // a selection drag fires many events: one chip update per pause
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.update(), 100);
  }

  update(): void {
    this.timer = undefined;
    const focus = sendFocusSetting() ? currentFocus() : undefined;
    this.store.setFocus(focus && focusChip(focus));
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const d of this.disposables) d.dispose();
  }
}

/** The prompt's context and mention blocks: the chip's focus unless removed, `#selection` always. */
export function promptExtras(
  text: string,
  picked: readonly PickedMention[],
  opts: { noFocus?: boolean; mentions?: readonly string[] },
): { context?: PromptContext; blocks: ContentBlock[] } {
  const focus = currentFocus();
  const blocks = mentionBlocks(text, picked, resolveWorkspaceFile, opts.mentions);
  const context = focusContext(focus, { send: sendFocusSetting() && !opts.noFocus, selection: wantsSelection(blocks) });
  return context ? { context, blocks } : { blocks };
}

/** `@path` typed by hand: a file of a workspace folder (relative to it), else undefined. */
export function resolveWorkspaceFile(rel: string): string | undefined {
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    if (folder.uri.scheme !== "file") continue;
    const uri = vscode.Uri.joinPath(folder.uri, rel);
    try {
      if (fs.statSync(uri.fsPath).isFile()) return uri.toString();
    } catch {
      // not in this folder
    }
  }
  return undefined;
}

/** The `@` and `#` completions of the panel's input. */
export class MentionSource {
  private files?: { at: number; paths: Promise<string[]> };

  constructor(private readonly log: vscode.LogOutputChannel) {}

  async complete(trigger: Trigger, query: string, available?: readonly string[]): Promise<MentionItem[]> {
    if (trigger === "#") return hashItems(query, available);
    const [files, symbols] = await Promise.all([this.fileItems(query), query.length >= 2 ? this.symbolItems(query) : Promise.resolve([])]);
    return [...files.slice(0, symbols.length ? 12 : 20), ...symbols.slice(0, 8)];
  }

  private async fileItems(query: string): Promise<MentionItem[]> {
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!folder) return [];
    const paths = await this.workspacePaths(folder);
    return rankPaths(query, paths, 20).map((p) => ({
      label: p.split("/").pop() ?? p,
      detail: p,
      insert: `@${p}`,
      block: { type: "resource_link", uri: vscode.Uri.joinPath(folder.uri, p).toString() },
    }));
  }

  private async symbolItems(query: string): Promise<MentionItem[]> {
    try {
      const found = (await vscode.commands.executeCommand<vscode.SymbolInformation[]>("vscode.executeWorkspaceSymbolProvider", query)) ?? [];
      return found
        .filter((s) => s.location?.uri?.scheme === "file" && vscode.workspace.getWorkspaceFolder(s.location.uri))
        .slice(0, 8)
        .map((s) => {
          const r = s.location.range;
          return {
            label: s.name,
            detail: `${vscode.workspace.asRelativePath(s.location.uri, false)}:${r.start.line + 1}`,
            insert: `@${s.name}`,
            block: {
              type: "resource_link",
              uri: s.location.uri.toString(),
              range: { start: { line: r.start.line, character: r.start.character }, end: { line: r.end.line, character: r.end.character } },
            },
          };
        });
    } catch (error) {
      this.log.warn(`workspace symbols: ${String(error)}`);
      return [];
    }
  }

  /** The folder's files, relative: git's list (tracked and untracked, .gitignore respected), else findFiles with the excludes. */
  private workspacePaths(folder: vscode.WorkspaceFolder): Promise<string[]> {
    if (this.files && Date.now() - this.files.at < FILES_TTL_MS) return this.files.paths;
    const paths = gitFiles(folder.uri.fsPath).catch(async () => {
      const excludes = Object.entries({
        ...vscode.workspace.getConfiguration("files", folder).get<Record<string, boolean>>("exclude"),
        ...vscode.workspace.getConfiguration("search", folder).get<Record<string, boolean>>("exclude"),
      })
        .filter(([, on]) => on === true)
        .map(([glob]) => glob);
      const found = await vscode.workspace.findFiles(new vscode.RelativePattern(folder, "**/*"), excludes.length ? `{${excludes.join(",")}}` : undefined, MAX_FILES);
      return found.map((u) => vscode.workspace.asRelativePath(u, false));
    });
    this.files = { at: Date.now(), paths };
    return paths;
  }
}

/** git's file list, with git from outside the workspace and nothing of the project's that runs (safeGit.ts). */
function gitFiles(cwd: string): Promise<string[]> {
  const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
  return gitListFiles(cwd, [...folders, cwd], MAX_FILES);
}
