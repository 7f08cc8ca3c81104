--- `:LspAgent permissions`: the approvals "allow for session" / "always allow" saved for this
--- workspace (agent/permissions/list), picked with `vim.ui.select`; the one picked is revoked
--- (agent/permissions/revoke), so what it allowed is asked again.
local client_mod = require("lsp_agent.client")
local log = require("lsp_agent.log")
local protocol = require("lsp_agent.protocol")

local M = {}

--- One approval as one printable line: what it allows and its scope.
function M.label(approval)
  local scope = approval.scope == "project" and "always, this project" or ("session " .. approval.scopeId)
  return vim.fn.strtrans(("%s: %s  [%s]"):format(approval.permission, approval.pattern, scope))
end

local function revoke(client, approval)
  local params = {
    scope = approval.scope,
    scopeId = approval.scopeId,
    permission = approval.permission,
    pattern = approval.pattern,
  }
  client_mod.request(client, protocol.requests.permissions_revoke, params, function(err, result)
    if err then
      return
    end
    if result and result.revoked then
      log.notify("revoked %s; it is asked again", M.label(approval))
    else
      log.notify("%s was no longer saved", M.label(approval))
    end
  end)
end

--- List this workspace's saved approvals; the one chosen is revoked.
function M.pick()
  client_mod.with_client(function(client)
    if not client then
      return
    end
    local params = { workspaceFolder = client_mod.folder_uri(client) }
    client_mod.request(client, protocol.requests.permissions_list, params, function(err, result)
      local approvals = (not err and result and result.approvals) or {}
      if err then
        return
      end
      if #approvals == 0 then
        return log.notify("no saved approvals in this workspace")
      end
      vim.ui.select(approvals, {
        prompt = "lsp-agent saved approvals (pick one to revoke)",
        kind = "lsp_agent_approval",
        format_item = M.label,
      }, function(choice)
        if choice then
          revoke(client, choice)
        end
      end)
    end)
  end)
end

return M
