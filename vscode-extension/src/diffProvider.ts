/**
 * "View diff": VS Code's diff editor between the file as it is now and the agent's proposal. The
 * proposal side is an editable document of the `lsp-agent-proposal:` file system (its text comes
 * from `agent/diff/get`; what the user types stays in the editor, or in memory when they save):
 * an Allow sends the user's text as `modifiedContent` when it differs from the proposal. The
 * base text of a new file (the left side) is served read-only under `lsp-agent-diff:`.
 */
import * as vscode from "vscode";
import { Methods, type DiffGetResult, type PermissionSubject } from "./shared/protocol";
import { modifiedContent } from "./shared/review";

export const DIFF_SCHEME = "lsp-agent-diff";
export const PROPOSAL_SCHEME = "lsp-agent-proposal";

type Request = <R>(method: string, params: unknown) => Promise<R>;

function diffParams(uri: vscode.Uri) {
  const q = new URLSearchParams(uri.query);
  return { sessionId: q.get("session"), changeSetId: q.get("changeSet"), uri: q.get("uri") };
}

/** The read-only base side (`lsp-agent-diff:`), for a file the proposal creates. */
export class ProposalProvider implements vscode.TextDocumentContentProvider {
  private readonly cache = new Map<string, string>();

  constructor(private readonly request: Request) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const key = uri.toString();
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached;
    const result = await this.request<DiffGetResult>(Methods.diffGet.name, diffParams(uri));
    const text = new URLSearchParams(uri.query).get("side") === "base" ? result.baseText : result.proposedText;
    this.cache.set(key, text);
    return text;
  }
}

interface Entry { proposed: string; data: Uint8Array; written: boolean; ctime: number; mtime: number }

/**
 * The proposal side (`lsp-agent-proposal:`): a file system of one file per proposal, writable so
 * the editor lets the user change it. Nothing here reaches the disk.
 */
export class ProposalFileSystem implements vscode.FileSystemProvider {
  private readonly entries = new Map<string, Entry>();
  private readonly changed = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.changed.event;

  constructor(private readonly request: Request) {}

  private async entry(uri: vscode.Uri): Promise<Entry> {
    const key = uri.toString();
    const found = this.entries.get(key);
    if (found) return found;
    const params = diffParams(uri);
    if (!params.sessionId || !params.changeSetId || !params.uri) throw vscode.FileSystemError.FileNotFound(uri);
    const result = await this.request<DiffGetResult>(Methods.diffGet.name, params);
    const now = Date.now();
    const entry: Entry = { proposed: result.proposedText, data: new TextEncoder().encode(result.proposedText), written: false, ctime: now, mtime: now };
    this.entries.set(key, this.entries.get(key) ?? entry);
    return this.entries.get(key)!;
  }

  /** The agent's proposed text, once the editor has loaded it. */
  proposed(uri: vscode.Uri): string | undefined {
    return this.entries.get(uri.toString())?.proposed;
  }

  /** What the user saved into the proposal, if they did. */
  saved(uri: vscode.Uri): string | undefined {
    const entry = this.entries.get(uri.toString());
    return entry?.written ? new TextDecoder().decode(entry.data) : undefined;
  }

  /** Forgets the proposals of a change set (answered: they are no longer asked about). */
  forget(changeSetId: string): void {
    for (const key of [...this.entries.keys()]) {
      if (diffParams(vscode.Uri.parse(key)).changeSetId === changeSetId) this.entries.delete(key);
    }
  }

  async stat(uri: vscode.Uri): Promise<vscode.FileStat> {
    const e = await this.entry(uri);
    return { type: vscode.FileType.File, ctime: e.ctime, mtime: e.mtime, size: e.data.byteLength };
  }

  async readFile(uri: vscode.Uri): Promise<Uint8Array> {
    return (await this.entry(uri)).data;
  }

  async writeFile(uri: vscode.Uri, content: Uint8Array): Promise<void> {
    const e = await this.entry(uri);
    e.data = content;
    e.written = true;
    e.mtime = Math.max(Date.now(), e.mtime + 1);
    this.changed.fire([{ type: vscode.FileChangeType.Changed, uri }]);
  }

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }

  readDirectory(): [string, vscode.FileType][] {
    return [];
  }

  createDirectory(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  delete(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  rename(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }
}

export function proposalUri(sessionId: string, changeSetId: string, fileUri: string, side: "proposed" | "base" = "proposed"): vscode.Uri {
  const file = vscode.Uri.parse(fileUri);
  const query = new URLSearchParams({ session: sessionId, changeSet: changeSetId, uri: fileUri, side }).toString();
  // the file's own path, so the editor picks its language
  return vscode.Uri.from({ scheme: side === "base" ? DIFF_SCHEME : PROPOSAL_SCHEME, path: file.path, query });
}

/** Opens the diff editor: the current text (left) against the proposal (right, editable). */
export async function showProposal(sessionId: string, subject: PermissionSubject | null | undefined, fileUri: string): Promise<void> {
  if (!subject || subject.type !== "edit") throw new Error("this request has no edit to show");
  const file = vscode.Uri.parse(fileUri);
  const exists = await vscode.workspace.fs.stat(file).then(() => true, () => false);
  // a new file has no current text: show the agent's base text (empty) instead
  const left = exists ? file : proposalUri(sessionId, subject.changeSetId, fileUri, "base");
  const right = proposalUri(sessionId, subject.changeSetId, fileUri);
  const name = file.path.split("/").pop() ?? fileUri;
  await vscode.commands.executeCommand("vscode.diff", left, right, `${name} ↔ agent proposal (editable)`, { preview: true, preserveFocus: false });
}

/**
 * The `modifiedContent` for an Allow of this edit ask: each proposal the user changed (in the
 * editor, saved or not), keyed by the file's uri as the ask names it.
 */
export function editedProposals(fs: ProposalFileSystem, sessionId: string, subject: PermissionSubject | null | undefined): Record<string, string> | undefined {
  if (!subject || subject.type !== "edit") return undefined;
  const uriOf = (fileUri: string) => proposalUri(sessionId, subject.changeSetId, fileUri);
  const edited = (fileUri: string) => {
    const uri = uriOf(fileUri).toString();
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri);
    // a document the user did not touch may still differ (the editor normalizes mixed line ends)
    if (doc?.isDirty) return doc.getText();
    return fs.saved(uriOf(fileUri));
  };
  return modifiedContent(
    subject.files.map((f) => f.uri),
    edited,
    (fileUri) => fs.proposed(uriOf(fileUri)),
  );
}

/**
 * Closes the diff editors of an answered ask. An edited proposal is saved first (into memory),
 * so closing it asks nothing.
 */
export async function closeProposals(fs: ProposalFileSystem, changeSetId: string): Promise<void> {
  const ofChangeSet = (uri: vscode.Uri | undefined) =>
    !!uri && (uri.scheme === PROPOSAL_SCHEME || uri.scheme === DIFF_SCHEME) && new URLSearchParams(uri.query).get("changeSet") === changeSetId;
  for (const doc of vscode.workspace.textDocuments) {
    if (doc.uri.scheme === PROPOSAL_SCHEME && ofChangeSet(doc.uri) && doc.isDirty) await doc.save();
  }
  const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.input instanceof vscode.TabInputTextDiff && ofChangeSet(t.input.modified));
  if (tabs.length) await vscode.window.tabGroups.close(tabs, true);
  fs.forget(changeSetId);
}
