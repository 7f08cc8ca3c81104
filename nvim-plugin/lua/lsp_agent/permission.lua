--- `agent/session/requestPermission` (protocol.md §4): `vim.ui.select` with the server's
--- options (once / session / always / deny), "Deny with reason…" (then `vim.ui.input`) and,
--- for an edit, "View diff" (a tab in diff mode, then the choice again).
local config = require("lsp_agent.config")
local diff = require("lsp_agent.diff")
local log = require("lsp_agent.log")
local session = require("lsp_agent.session")
local ui = require("lsp_agent.ui")
local util = require("lsp_agent.util")

local M = {}

M.VIEW_DIFF = "View diff"
M.DENY_WITH_REASON = "Deny with reason…"

local function cancelled()
  return { outcome = { outcome = "cancelled" } }
end

local function selected(option_id, reason)
  local outcome = { outcome = "selected", optionId = option_id }
  if reason and reason ~= "" then
    outcome.reason = reason
  end
  return { outcome = outcome }
end

--- A one-line description of what is asked.
function M.describe(params)
  local subject = util.nn(params.subject)
  local detail = ""
  if subject and subject.type == "command" then
    detail = "$ " .. tostring(subject.command)
  elseif subject and subject.type == "edit" then
    local files = {}
    for _, file in ipairs(subject.files or {}) do
      table.insert(files, ("%s (+%d -%d)"):format(util.display_path(file.uri), file.additions or 0, file.deletions or 0))
    end
    detail = table.concat(files, ", ")
  elseif subject and subject.type == "fetch" then
    detail = tostring(subject.url)
  elseif params.patterns and #params.patterns > 0 then
    detail = table.concat(params.patterns, ", ")
  end
  local text = ("lsp-agent: %s"):format(params.title or params.permission)
  if detail ~= "" and detail ~= params.title then
    text = text .. " — " .. detail
  end
  return text
end

--- The choices shown, in order: `{label, option?, action?}`.
function M.choices(params)
  local choices = {}
  local reject
  local patterns = table.concat(params.patterns or {}, ", ")
  for _, option in ipairs(params.options or {}) do
    local label = option.name or option.optionId
    if (option.kind == "allow_session" or option.kind == "allow_always") and patterns ~= "" then
      label = ("%s (%s)"):format(label, patterns)
    end
    table.insert(choices, { label = label, option = option })
    if option.kind == "reject_once" and not reject then
      reject = option
    end
  end
  if reject then
    table.insert(choices, { label = M.DENY_WITH_REASON, option = reject, action = "reason" })
  end
  local subject = util.nn(params.subject)
  if subject and subject.type == "edit" and #(subject.files or {}) > 0 then
    table.insert(choices, { label = M.VIEW_DIFF, action = "diff" })
  end
  return choices
end

local function open_diff(client, params)
  local subject = params.subject
  local uris = {}
  for _, file in ipairs(subject.files) do
    table.insert(uris, file.uri)
  end
  return ui.await(function(cb)
    diff.open(client, params.sessionId, subject.changeSetId, uris, cb)
  end)
end

--- The handler (runs in the RPC coroutine): the result to send back.
function M.ask(params, ctx)
  if type(params) ~= "table" or type(params.options) ~= "table" then
    return cancelled()
  end
  if not ui.can_wait() then
    log.warn("cannot show a permission prompt here; answering cancelled")
    return cancelled()
  end
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  local s = session.get(params.sessionId, ctx.client_id)
  s.pending_permission = params
  local subject = util.nn(params.subject)
  if subject and subject.type == "edit" then
    local uris = {}
    for _, file in ipairs(subject.files or {}) do
      table.insert(uris, file.uri)
    end
    s.last_change_set = { changeSetId = subject.changeSetId, uris = uris }
  end
  session.changed(s)
  local tabs = {}
  local choices = M.choices(params)
  local prompt = M.describe(params)
  local result
  while not result do
    local choice = ui.select(choices, {
      prompt = prompt,
      kind = "lsp_agent_permission",
      format_item = function(item)
        return item.label
      end,
    })
    if not choice then
      result = cancelled()
    elseif choice.action == "diff" then
      if client then
        vim.list_extend(tabs, open_diff(client, params) or {})
      end
    elseif choice.action == "reason" then
      local reason = ui.input({ prompt = "Reason for denying (the agent reads it): " })
      if reason ~= nil then
        result = selected(choice.option.optionId, reason)
      end
    else
      result = selected(choice.option.optionId)
    end
  end
  if config.options.diff_close_on_answer then
    diff.close(tabs)
  end
  s.pending_permission = nil
  session.changed(s)
  log.info("permission %q answered: %s", params.title or "", vim.inspect(result.outcome))
  return result
end

return M
