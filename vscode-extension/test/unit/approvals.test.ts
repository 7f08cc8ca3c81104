/** "Saved Approvals": the list request for the workspace, the rows, and one revoke per pick. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { approvalItem, listApprovals, revokeApprovals } from "../../src/approvals";
import type { SavedApproval } from "../../src/shared/protocol";

const project: SavedApproval = {
  scope: "project",
  scopeId: "file:///home/u/proj",
  permission: "bash",
  pattern: "git c[*] *",
  sessionId: "ses_1",
  createdAt: "2026-12-03T10:00:00Z",
};
const session: SavedApproval = { ...project, scope: "session", scopeId: "ses_2", permission: "mcp", pattern: "db:get[*]" };

function fakeServer(revoked: boolean[]) {
  const requests: { method: string; params: any }[] = [];
  const request = async <R>(method: string, params: any): Promise<R> => {
    requests.push({ method, params });
    if (method === "agent/permissions/list") return { approvals: [project, session] } as R;
    if (method === "agent/permissions/revoke") return { revoked: revoked.shift() ?? false } as R;
    throw new Error(`unexpected ${method}`);
  };
  return { requests, request };
}

describe("saved approvals", () => {
  it("lists this workspace's approvals, each row naming the pattern exactly and its scope", async () => {
    const server = fakeServer([]);
    const items = await listApprovals(server.request, "file:///home/u/proj");
    assert.deepEqual(server.requests, [{ method: "agent/permissions/list", params: { workspaceFolder: "file:///home/u/proj" } }]);
    assert.deepEqual(
      items.map((i) => [i.label, i.description]),
      [
        ["bash: git c[*] *", "always, for this project"],
        ["mcp: db:get[*]", "for session ses_2"],
      ],
    );
  });

  it("revokes each picked approval by its scope, permission and pattern, counting those still in force", async () => {
    const server = fakeServer([true, false]);
    const count = await revokeApprovals(server.request, [project, session]);
    assert.equal(count, 1);
    assert.deepEqual(
      server.requests.map((r) => r.params),
      [
        { scope: "project", scopeId: "file:///home/u/proj", permission: "bash", pattern: "git c[*] *" },
        { scope: "session", scopeId: "ses_2", permission: "mcp", pattern: "db:get[*]" },
      ],
    );
  });

  it("a row carries the approval it stands for", () => {
    assert.equal(approvalItem(project).approval, project);
  });
});
