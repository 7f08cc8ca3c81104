/**
 * "View diff": VS Code's diff editor between the file as it is now and the agent's proposal, served
 * read-only from `agent/diff/get` under the `lsp-agent-diff:` scheme.
 */
import * as vscode from "vscode";
import { Methods, type DiffGetResult, type PermissionSubject } from "./shared/protocol";

export const DIFF_SCHEME = "lsp-agent-diff";

type Request = <R>(method: string, params: unknown) => Promise<R>;

export class ProposalProvider implements vscode.TextDocumentContentProvider {
  private readonly cache = new Map<string, string>();

  constructor(private readonly request: Request) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const key = uri.toString();
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached;
    const q = new URLSearchParams(uri.query);
    const result = await this.request<DiffGetResult>(Methods.diffGet.name, {
      sessionId: q.get("session"),
      changeSetId: q.get("changeSet"),
      uri: q.get("uri"),
    });
    const text = q.get("side") === "base" ? result.baseText : result.proposedText;
    this.cache.set(key, text);
    return text;
  }
}

export function proposalUri(sessionId: string, changeSetId: string, fileUri: string, side: "proposed" | "base" = "proposed"): vscode.Uri {
  const file = vscode.Uri.parse(fileUri);
  const query = new URLSearchParams({ session: sessionId, changeSet: changeSetId, uri: fileUri, side }).toString();
  return vscode.Uri.from({ scheme: DIFF_SCHEME, path: file.path, query });
}

/** Opens the diff editor: the current text (left) against the proposal (right). */
export async function showProposal(sessionId: string, subject: PermissionSubject | null | undefined, fileUri: string): Promise<void> {
  if (!subject || subject.type !== "edit") throw new Error("this request has no edit to show");
  const file = vscode.Uri.parse(fileUri);
  const exists = await vscode.workspace.fs.stat(file).then(() => true, () => false);
  // a new file has no current text: show the agent's base text (empty) instead
  const left = exists ? file : proposalUri(sessionId, subject.changeSetId, fileUri, "base");
  const right = proposalUri(sessionId, subject.changeSetId, fileUri);
  const name = file.path.split("/").pop() ?? fileUri;
  await vscode.commands.executeCommand("vscode.diff", left, right, `${name} ↔ agent proposal`, { preview: true, preserveFocus: false });
}
