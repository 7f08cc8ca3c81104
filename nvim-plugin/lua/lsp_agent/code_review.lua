--- `:LspAgent codereview [--staged | --base REF]`: the agent reviews YOUR changes (git) and
--- its findings land in the quickfix list. The server also publishes them as diagnostics
--- (source "lsp-agent"), whose code actions (`vim.lsp.buf.code_action()`) are "Fix with
--- agent" and "Dismiss"; a rerun replaces them. Not `:LspAgent review`: that one lists the
--- agent's own pending changes.
local M = {}

local client_mod = require("lsp_agent.client")
local log = require("lsp_agent.log")

local QF_TYPE = { "E", "W", "I", "N" }

--- The request's params from the command's words, or nil and why.
function M.parse(args)
  local words = vim.split(vim.trim(args or ""), "%s+", { trimempty = true })
  local params = {}
  local i = 1
  while i <= #words do
    local word = words[i]
    if word == "--staged" or word == "staged" then
      params.staged = true
    elseif (word == "--base" or word == "base") and words[i + 1] then
      params.base = words[i + 1]
      i = i + 1
    else
      return nil, ("lsp-agent: codereview takes --staged or --base REF, not %q"):format(word)
    end
    i = i + 1
  end
  if params.staged and params.base then
    return nil, "lsp-agent: codereview takes --staged or --base REF, not both"
  end
  return params
end

--- The findings of an `agent/codeReview/run` result as quickfix items.
function M.items(result)
  local items = {}
  for _, finding in ipairs((result or {}).findings or {}) do
    table.insert(items, {
      filename = vim.uri_to_fname(finding.uri),
      lnum = finding.range.start.line + 1,
      end_lnum = finding.range["end"].line,
      col = 1,
      type = QF_TYPE[finding.severity] or "W",
      text = finding.message,
    })
  end
  return items
end

function M.run(args)
  local params, problem = M.parse(args)
  if not params then
    return vim.notify(problem, vim.log.levels.ERROR)
  end
  client_mod.with_client(function(client)
    if not client then
      return
    end
    params.workspaceFolder = client_mod.folder_uri(client)
    vim.notify("lsp-agent: reviewing your changes…", vim.log.levels.INFO)
    client_mod.request(client, require("lsp_agent.protocol").requests.code_review_run, params, function(err, result)
      if err then
        return vim.notify("lsp-agent: the review failed: " .. client_mod.describe_error(err), vim.log.levels.ERROR)
      end
      local items = M.items(result)
      local summary = (result and result.summary) or ""
      vim.fn.setqflist({}, " ", { title = "lsp-agent: review of your changes", items = items })
      log.info("review: %d finding(s). %s", #items, summary)
      vim.notify(("lsp-agent: review found %d problem(s). %s"):format(#items, summary), vim.log.levels.INFO)
      if #items > 0 then
        vim.cmd("copen")
      end
    end)
  end)
end

return M
