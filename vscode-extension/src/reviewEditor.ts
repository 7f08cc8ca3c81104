/**
 * The review in the editor: a CodeLens "Keep change | Undo change" above every pending hunk of the active
 * session, and a gutter mark (a bar on added or changed lines, a wedge where lines were deleted)
 * on its lines, both from the review list (`ReviewStore`). They follow the list; a change of a
 * reviewed document asks for the list again (its ranges are in the document's current text).
 */
import * as vscode from "vscode";
import type { ReviewStore } from "./review";
import type { ReviewFile } from "./shared/protocol";
import { hunksAtLines, pendingMarks, type PendingMark, type ReviewSnapshot } from "./shared/review";

/** The commands a CodeLens runs with the hunk id (extension.ts registers them). */
export interface LensCommands { keep: string; undo: string; comment?: string }

const REFRESH_AFTER_EDIT_MS = 300;

export class ReviewEditor implements vscode.CodeLensProvider, vscode.Disposable {
  private files = new Map<string, ReviewFile>();
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changed.event;
  private readonly decorations: Record<PendingMark["kind"], vscode.TextEditorDecorationType>;
  private readonly disposables: vscode.Disposable[] = [];
  private timer?: ReturnType<typeof setTimeout>;

  constructor(
    extensionUri: vscode.Uri,
    private readonly reviews: ReviewStore,
    private readonly commands: LensCommands,
  ) {
    const icon = (name: string) => vscode.Uri.joinPath(extensionUri, "media", `gutter-${name}.svg`);
    this.decorations = {
      added: vscode.window.createTextEditorDecorationType({
        gutterIconPath: icon("added"),
        gutterIconSize: "contain",
        isWholeLine: true,
        backgroundColor: new vscode.ThemeColor("diffEditor.insertedLineBackground"),
        overviewRulerColor: new vscode.ThemeColor("editorOverviewRuler.addedForeground"),
        overviewRulerLane: vscode.OverviewRulerLane.Left,
      }),
      modified: vscode.window.createTextEditorDecorationType({
        gutterIconPath: icon("modified"),
        gutterIconSize: "contain",
        isWholeLine: true,
        backgroundColor: new vscode.ThemeColor("diffEditor.insertedLineBackground"),
        overviewRulerColor: new vscode.ThemeColor("editorOverviewRuler.modifiedForeground"),
        overviewRulerLane: vscode.OverviewRulerLane.Left,
      }),
      deleted: vscode.window.createTextEditorDecorationType({
        gutterIconPath: icon("deleted"),
        gutterIconSize: "contain",
        overviewRulerColor: new vscode.ThemeColor("editorOverviewRuler.deletedForeground"),
        overviewRulerLane: vscode.OverviewRulerLane.Left,
      }),
    };
    this.disposables.push(
      this.changed,
      ...Object.values(this.decorations),
      reviews.onChange((review) => this.show(review)),
      vscode.window.onDidChangeVisibleTextEditors(() => this.decorate()),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.contentChanges.length && this.files.has(e.document.uri.toString())) this.refreshSoon();
      }),
    );
    this.show(reviews.snapshot());
  }

  /** The review list entry of a document (the server's uris, spelled as VS Code spells them). */
  file(uri: vscode.Uri): ReviewFile | undefined {
    return this.files.get(uri.toString());
  }

  private show(review: ReviewSnapshot | undefined): void {
    this.files = new Map((review?.files ?? []).map((f) => [vscode.Uri.parse(f.uri).toString(), f]));
    this.changed.fire();
    this.decorate();
  }

  private refreshSoon(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.reviews.refresh(), REFRESH_AFTER_EDIT_MS);
  }

  private decorate(): void {
    for (const editor of vscode.window.visibleTextEditors) {
      const marks = pendingMarks(this.file(editor.document.uri));
      const last = Math.max(editor.document.lineCount - 1, 0);
      for (const [kind, type] of Object.entries(this.decorations) as [PendingMark["kind"], vscode.TextEditorDecorationType][]) {
        const ranges = marks
          .filter((m) => m.kind === kind)
          .map((m) => {
            const start = Math.min(m.startLine, last);
            const end = Math.min(Math.max(m.endLine - 1, m.startLine), last);
            return new vscode.Range(start, 0, end, 0);
          });
        editor.setDecorations(type, ranges);
      }
    }
  }

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    const last = Math.max(document.lineCount - 1, 0);
    return pendingMarks(this.file(document.uri)).flatMap((m) => {
      const line = new vscode.Range(Math.min(m.line, last), 0, Math.min(m.line, last), 0);
      return [
        new vscode.CodeLens(line, { title: "Keep change", tooltip: "Keep this change of the agent", command: this.commands.keep, arguments: [m.hunkId] }),
        new vscode.CodeLens(line, { title: "Undo change", tooltip: "Undo this change of the agent (Ctrl+Z undoes the undo)", command: this.commands.undo, arguments: [m.hunkId] }),
        ...(this.commands.comment
          ? [new vscode.CodeLens(line, { title: "Comment…", tooltip: "A comment for the agent on this change (sent with your next prompt)", command: this.commands.comment, arguments: [m.hunkId] })]
          : []),
      ];
    });
  }

  /** The pending hunks under the active editor's selections (for the palette commands). */
  hunksAtCursor(): string[] {
    const editor = vscode.window.activeTextEditor;
    if (!editor) return [];
    const file = this.file(editor.document.uri);
    const ids = editor.selections.flatMap((s) => hunksAtLines(file, s.start.line, s.end.line));
    return [...new Set(ids)];
  }

  dispose(): void {
    clearTimeout(this.timer);
    for (const d of this.disposables) d.dispose();
  }
}
