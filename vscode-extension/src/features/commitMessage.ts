/**
 * Issue 37 in VS Code: the ✨ button of the Source Control view (`scm/title`) fills the git
 * repository's message box with the agent's message for the staged changes
 * (`agent/commitMessage`), through the built-in Git extension's API; and comments per hunk from
 * the palette or a CodeLens (`agent/review/comment`), sent now with Send Review Comments.
 */
import * as vscode from "vscode";
import { Methods, type CommitMessageParams, type CommitMessageResult } from "../shared/protocol";
import { Commands } from "./commands";
import { command, type Deps } from "./deps";

/** The parts of the Git extension's API (`vscode.git`, `getAPI(1)`) this uses. */
interface GitRepository {
  readonly rootUri: vscode.Uri;
  readonly inputBox: { value: string };
}
interface GitApi {
  readonly repositories: GitRepository[];
  getRepository(uri: vscode.Uri): GitRepository | null;
}

async function gitApi(): Promise<GitApi> {
  const extension = vscode.extensions.getExtension<{ getAPI(version: 1): GitApi }>("vscode.git");
  if (!extension) throw new Error("the built-in Git extension is not available");
  const exports = extension.isActive ? extension.exports : await extension.activate();
  return exports.getAPI(1);
}

/** The repository of the clicked Source Control view, else of the active editor, else the first. */
async function repositoryFor(arg: unknown): Promise<GitRepository> {
  const api = await gitApi();
  const root = (arg as { rootUri?: unknown } | undefined)?.rootUri;
  const clicked = root instanceof vscode.Uri ? api.repositories.find((r) => r.rootUri.toString() === root.toString()) : undefined;
  const active = vscode.window.activeTextEditor?.document.uri;
  const found = clicked ?? (active && api.getRepository(active)) ?? api.repositories[0];
  if (!found) throw new Error("no git repository is open");
  return found;
}

/** The folder the server is asked about: the repository's root when it is in a workspace folder, else a workspace folder inside the repository. */
function folderOf(repo: GitRepository): string | undefined {
  if (vscode.workspace.getWorkspaceFolder(repo.rootUri)) return repo.rootUri.toString();
  const root = repo.rootUri.path.replace(/\/?$/, "/");
  return vscode.workspace.workspaceFolders?.find((f) => f.uri.path.startsWith(root))?.uri.toString();
}

export function register(context: vscode.ExtensionContext, { store, reviews }: Deps): void {
  const failed = (what: string) => (error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    void vscode.window.showErrorMessage(`LSP Agent: ${what}: ${message}`);
  };

  async function writeCommitMessage(arg?: unknown): Promise<void> {
    const repo = await repositoryFor(arg);
    const uri = folderOf(repo);
    const params: CommitMessageParams = uri ? { uri } : {};
    const conn = await store.connected();
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.SourceControl, title: "Writing a commit message…" },
      () => conn.request<CommitMessageResult>(Methods.commitMessage.name, params),
    );
    repo.inputBox.value = result.message;
  }

  async function commentHunk(arg?: unknown): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const hunkId = typeof arg === "string" ? arg : editor ? reviewsAt(editor)[0] : undefined;
    if (!hunkId) throw new Error("no change of the agent here");
    const text = await vscode.window.showInputBox({
      title: "Comment on the change",
      prompt: "The agent reads it at the start of your next prompt (or now, with Send Review Comments).",
      ignoreFocusOut: true,
    });
    if (text?.trim()) await reviews.comment(hunkId, text);
  }

  /** The pending hunks under the editor's cursor, from the review list. */
  function reviewsAt(editor: vscode.TextEditor): string[] {
    const file = reviews.snapshot()?.files.find((f) => vscode.Uri.parse(f.uri).toString() === editor.document.uri.toString());
    const line = editor.selection.active.line;
    return (file?.hunks ?? []).filter((h) => h.range && h.range.start.line <= line && line <= Math.max(h.range.end.line - 1, h.range.start.line)).map((h) => h.hunkId);
  }

  async function sendComments(): Promise<void> {
    const result = await reviews.sendComments();
    if (!result.sent) void vscode.window.showInformationMessage("LSP Agent: no comment to send.");
  }

  context.subscriptions.push(
    command(Commands.generateCommitMessage, (arg?: unknown) => writeCommitMessage(arg).catch(failed("no commit message"))),
    command(Commands.commentHunk, (arg?: unknown) => commentHunk(arg).catch(failed("the comment was not kept"))),
    command(Commands.sendComments, () => sendComments().catch(failed("the comments were not sent"))),
  );
}
