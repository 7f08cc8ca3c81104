/**
 * "LSP Agent: Saved Approvals": the "allow for session" / "always allow" answers saved for this
 * workspace (`agent/permissions/list`), in a quick pick; the ones picked are revoked
 * (`agent/permissions/revoke`), so what they allowed is asked again. The rows are built here
 * without VS Code, so they are unit-tested.
 */
import type { PermissionsListResult, PermissionsRevokeParams, PermissionsRevokeResult, SavedApproval } from "./shared/protocol";
import { Methods } from "./shared/protocol";

export interface ApprovalItem {
  label: string;
  description: string;
  detail: string;
  approval: SavedApproval;
}

/** One approval as a quick-pick row: what it allows, its scope, when it was given. */
export function approvalItem(approval: SavedApproval): ApprovalItem {
  const scope = approval.scope === "project" ? "always, for this project" : `for session ${approval.scopeId}`;
  return {
    label: `${approval.permission}: ${approval.pattern}`,
    description: scope,
    detail: `given ${approval.createdAt} in session ${approval.sessionId}`,
    approval,
  };
}

type Request = <R>(method: string, params: unknown) => Promise<R>;

export async function listApprovals(request: Request, workspaceFolder: string | undefined): Promise<ApprovalItem[]> {
  const result = await request<PermissionsListResult>(Methods.permissionsList.name, workspaceFolder ? { workspaceFolder } : {});
  return result.approvals.map(approvalItem);
}

/** Revokes each; the number that were still in force. */
export async function revokeApprovals(request: Request, approvals: SavedApproval[]): Promise<number> {
  let revoked = 0;
  for (const a of approvals) {
    const params: PermissionsRevokeParams = { scope: a.scope, scopeId: a.scopeId, permission: a.permission, pattern: a.pattern };
    const result = await request<PermissionsRevokeResult>(Methods.permissionsRevoke.name, params);
    if (result.revoked) revoked += 1;
  }
  return revoked;
}
