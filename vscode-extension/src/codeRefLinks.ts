/**
 * Opens a code reference clicked in the panel (`src/a.py:12:5`, shared/codeRefs.ts) at its
 * line. A relative path is looked up in each workspace folder in turn (the first that has the
 * file wins; a path that starts with a folder's own name is tried inside that folder too), an
 * absolute one is taken as it is. A file that is nowhere gets a message, not an empty editor.
 * A location with a uri and range (`openLocation`) opens as it is.
 */
import * as path from "node:path";
import * as vscode from "vscode";

export interface CodeRefTarget {
  path: string;
  line: number;
  column?: number;
}

export async function openCodeRef(ref: CodeRefTarget): Promise<void> {
  const uri = await locate(ref.path);
  if (!uri) {
    void vscode.window.showWarningMessage(`lsp-agent: ${ref.path} is not in the workspace.`);
    return;
  }
  const document = await vscode.workspace.openTextDocument(uri);
  const line = Math.min(Math.max(ref.line - 1, 0), Math.max(document.lineCount - 1, 0));
  const character = Math.max((ref.column ?? 1) - 1, 0);
  const at = new vscode.Position(line, character);
  await vscode.window.showTextDocument(document, { selection: new vscode.Range(at, at), preview: true });
}

async function locate(written: string): Promise<vscode.Uri | undefined> {
  const candidates: vscode.Uri[] = [];
  if (path.isAbsolute(written)) candidates.push(vscode.Uri.file(written));
  else {
    for (const folder of vscode.workspace.workspaceFolders ?? []) {
      candidates.push(vscode.Uri.joinPath(folder.uri, written));
      const [first, ...rest] = written.replace(/^\.\//, "").split("/");
      if (first === folder.name && rest.length) candidates.push(vscode.Uri.joinPath(folder.uri, ...rest));
    }
  }
  for (const candidate of candidates) {
    try {
      if ((await vscode.workspace.fs.stat(candidate)).type & vscode.FileType.File) return candidate;
    } catch {
      // not there: try the next folder
    }
  }
  return undefined;
}

/** A location the panel links to (a tool's file, a diagnostic), with its range selected. */
export async function openLocation(uri: string, range?: { start: { line: number; character: number }; end: { line: number; character: number } }): Promise<void> {
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(uri));
  const selection = range ? new vscode.Range(range.start.line, range.start.character, range.end.line, range.end.character) : undefined;
  await vscode.window.showTextDocument(doc, { selection, preview: true });
}
