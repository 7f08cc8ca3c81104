/**
 * `agent/documents/save` (protocol.md §6): right after the agent edits an open document, the
 * server asks this window to save it, so the command the agent runs next (the tests, grep, git)
 * reads the edit from the disk. The server asks only for a document that held exactly the file on
 * disk before its edit (one with the user's own unsaved changes is never saved for them), at the
 * version its edit produced; this saves it only at that version — its text is then exactly the
 * agent's — with `TextDocument.save()`, the user's own save: format-on-save and other save
 * participants run (the server tells the model when the text changed). Free of the `vscode` module
 * (the host finds documents), so it is unit-tested under plain Node.
 */
import type { SaveDocumentsParams, SaveDocumentsResult, SavedDocument } from "./shared/protocol";

/** What this needs of a `vscode.TextDocument`. */
export interface SavableDocument {
  readonly version: number;
  readonly isDirty: boolean;
  save(): PromiseLike<boolean>;
}

/** Finds the open document of a uri (the window's `workspace.textDocuments`). */
export interface SaveHost {
  find(uri: string): SavableDocument | undefined;
}

export async function saveDocuments(params: SaveDocumentsParams, host: SaveHost): Promise<SaveDocumentsResult> {
  const documents: SavedDocument[] = [];
  for (const { uri, version } of params.documents ?? []) documents.push(await saveOne(uri, version, host));
  return { documents };
}

async function saveOne(uri: string, version: number, host: SaveHost): Promise<SavedDocument> {
  const document = host.find(uri);
  if (!document) return { uri, saved: false, reason: "the document is not open" };
  if (document.version !== version) {
    return { uri, saved: false, reason: `the document changed after the edit (version ${document.version}, the edit made ${version})` };
  }
  if (document.isDirty) {
    let saved: boolean;
    try {
      saved = await document.save();
    } catch (error) {
      return { uri, saved: false, reason: error instanceof Error ? error.message : String(error) };
    }
    if (!saved) return { uri, saved: false, reason: "VS Code did not save it" };
  }
  return { uri, saved: true, version: document.version };
}
