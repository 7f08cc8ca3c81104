/**
 * Permission answers and what they show: an edit's proposal as a native, editable diff (an Allow
 * sends the user's text), and "Saved Approvals" (revoke what was allowed for good).
 */
import * as vscode from "vscode";
import { listApprovals, revokeApprovals } from "../approvals";
import { closeProposals, DIFF_SCHEME, editedProposals, PROPOSAL_SCHEME, ProposalFileSystem, ProposalProvider, showProposal } from "../diffProvider";
import type { RequestPermissionResult } from "../shared/protocol";
import { Commands } from "./commands";
import { command, type Deps } from "./deps";

export interface Approvals {
  /** An answer from a permission card (no option: cancelled). An Allow of an edit sends the proposals the user changed. */
  answer(key: string, optionId?: string, reason?: string): Promise<void>;
  /** A pending edit's proposal for `uri`, in the diff editor. */
  viewDiff(key: string, uri: string): Promise<void>;
}

export function register(context: vscode.ExtensionContext, { store, client, log }: Deps): Approvals {
  const proposals = new ProposalFileSystem((m, p) => client.request(m, p));

  async function answer(key: string, optionId?: string, reason?: string) {
    const pending = store.pendingPermission(key);
    if (!pending) return;
    const { sessionId, subject, options } = pending.params;
    let result: RequestPermissionResult = { outcome: { outcome: "cancelled" } };
    if (optionId) {
      const allow = options.find((o) => o.optionId === optionId)?.kind.startsWith("allow") ?? false;
      const edited = allow ? editedProposals(proposals, sessionId, subject) : undefined;
      result = { outcome: { outcome: "selected", optionId, ...(reason ? { reason } : {}), ...(edited ? { modifiedContent: edited } : {}) } };
      if (edited) log.info(`allow with the user's text for ${Object.keys(edited).join(", ")}`);
    }
    store.answerPermission(key, result);
    if (subject?.type === "edit") await closeProposals(proposals, subject.changeSetId).catch((e) => log.warn(`closing the diff: ${String(e)}`));
  }

  async function viewDiff(key: string, uri: string) {
    const pending = store.pendingPermission(key);
    if (!pending) throw new Error("this permission request is no longer pending");
    await showProposal(pending.params.sessionId, pending.params.subject, uri);
  }

  /** Saved approvals of this workspace; the ones picked are revoked. */
  async function pickApprovals() {
    const request = <R>(method: string, params: unknown) => client.request<R>(method, params);
    const items = await listApprovals(request, vscode.workspace.workspaceFolders?.[0]?.uri.toString());
    if (!items.length) {
      void vscode.window.showInformationMessage("LSP Agent: no saved approvals for this workspace.");
      return 0;
    }
    const picked = await vscode.window.showQuickPick(items, { title: "LSP Agent: saved approvals — pick the ones to revoke", canPickMany: true });
    if (!picked?.length) return 0;
    const revoked = await revokeApprovals(request, picked.map((item) => item.approval));
    void vscode.window.showInformationMessage(`LSP Agent: revoked ${revoked} saved approval${revoked === 1 ? "" : "s"}; what they allowed is asked again.`);
    return revoked;
  }

  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider(DIFF_SCHEME, new ProposalProvider((m, p) => client.request(m, p))),
    vscode.workspace.registerFileSystemProvider(PROPOSAL_SCHEME, proposals, { isCaseSensitive: true }),
    command(Commands.savedApprovals, () => pickApprovals()),
  );
  return { answer, viewDiff };
}
