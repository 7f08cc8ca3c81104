--- Handlers of what the server sends: the update stream, permission asks, questions, edits.
local log = require("lsp_agent.log")
local protocol = require("lsp_agent.protocol")
local session = require("lsp_agent.session")
local util = require("lsp_agent.util")

local M = {}

--- Resync a session after a gap in `seq`: replay what is missing with `agent/session/load`.
--- `from_seq` 1 rebuilds the session from scratch.
function M.load(client, session_id, from_seq, cb)
  local s = session.get(session_id, client.id)
  if s.loading then
    if cb then
      table.insert(s.loading, cb)
    end
    return
  end
  if from_seq <= 1 then
    s:reset()
  end
  s.loading = cb and { cb } or {}
  local replay = from_seq <= 1 and "full" or { fromSeq = from_seq }
  log.info("loading session %s (replay %s)", session_id, from_seq <= 1 and "full" or ("from seq " .. from_seq))
  session.changed(s)
  require("lsp_agent.client").request(client, protocol.requests.session_load, {
    sessionId = session_id,
    replay = replay,
  }, function(err, result)
    local callbacks = s.loading or {}
    s.loading = nil
    if not err and result then
      s.state = result.state or s.state
      if result.configOptions and #result.configOptions > 0 then
        s.config_options = result.configOptions
      end
      s.seq = math.max(s.seq, result.lastSeq or 0)
    end
    session.changed(s)
    for _, fn in ipairs(callbacks) do
      fn(err, result)
    end
  end)
end

local function on_update(err, params, ctx)
  if err or type(params) ~= "table" or type(params.update) ~= "table" then
    return
  end
  local outcome = session.receive(params, ctx.client_id)
  if outcome == "gap" then
    local s = session.get(params.sessionId)
    log.info("gap in session %s after seq %d (got %d): resyncing", params.sessionId, s.seq, params.seq)
    local client = vim.lsp.get_client_by_id(ctx.client_id)
    if client then
      M.load(client, params.sessionId, s.seq + 1)
    end
  end
end

local function on_permission(_, params, ctx)
  return require("lsp_agent.permission").ask(params, ctx)
end

local function on_question(_, params, ctx)
  return require("lsp_agent.question").ask(params, ctx)
end

--- Break the undo sequence of `bufnr`, so the agent's edit is one undo step of its own.
local function undo_break(bufnr)
  if vim.api.nvim_buf_is_loaded(bufnr) then
    vim.api.nvim_buf_call(bufnr, function()
      vim.cmd("let &l:undolevels = &l:undolevels")
    end)
  end
end
M.undo_break = undo_break

--- What `:write` would put on disk for `bufnr` (nil when the plugin cannot tell: another
--- encoding, binary).
local function written_form(bufnr)
  local bo = vim.bo[bufnr]
  if bo.binary or (bo.fileencoding ~= "" and bo.fileencoding ~= "utf-8") then
    return nil
  end
  local nl = ({ dos = "\r\n", mac = "\r" })[bo.fileformat] or "\n"
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  if #lines == 1 and lines[1] == "" and not bo.eol then
    return bo.bomb and "\239\187\191" or ""
  end
  local text = table.concat(lines, nl)
  if bo.eol or bo.fixeol then
    text = text .. nl
  end
  return (bo.bomb and "\239\187\191" or "") .. text
end

--- Whether the buffer's text is the file's on disk (then it is not "modified": an undo of
--- the agent's edit, which the server makes through the buffer, leaves it as saved).
local function same_as_disk(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == "" or vim.bo[bufnr].buftype ~= "" then
    return false
  end
  local file = io.open(name, "rb")
  if not file then
    return false
  end
  local on_disk = file:read("*a")
  file:close()
  local buffer = written_form(bufnr)
  if buffer == nil then
    return false
  end
  return on_disk == buffer or (on_disk == "" and buffer == "\n")
end
M.same_as_disk = same_as_disk

--- `workspace/applyEdit`: Neovim's own application of the edit, but a stale version is
--- refused (Neovim would skip the edit yet answer `applied: true`), and each edited buffer
--- gets the edit as a single undo step; a buffer the edit leaves as it is on disk is not
--- "modified".
local function on_apply_edit(_, params, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  if not client or type(params) ~= "table" or type(params.edit) ~= "table" then
    return { applied = false, failureReason = "malformed workspace/applyEdit" }
  end
  local edit = params.edit
  local buffers = {}
  for _, change in ipairs(util.nn(edit.documentChanges) or {}) do
    if change.textDocument then
      local uri = change.textDocument.uri
      local bufnr = vim.uri_to_bufnr(uri)
      local version = util.nn(change.textDocument.version)
      local current = vim.lsp.util.buf_versions[bufnr]
      if version and current and vim.api.nvim_buf_is_loaded(bufnr) and current ~= version then
        log.info("refused an edit of %s at version %s: the buffer is at %s", uri, version, current)
        return {
          applied = false,
          failureReason = ("the buffer changed (version %s, the edit is for %s)"):format(current, version),
        }
      end
      buffers[bufnr] = version or "unversioned"
    end
  end
  for uri in pairs(util.nn(edit.changes) or {}) do
    buffers[vim.uri_to_bufnr(uri)] = "unversioned"
  end
  for bufnr in pairs(buffers) do
    undo_break(bufnr)
  end
  local ok, result = pcall(vim.lsp.util.apply_workspace_edit, edit, client.offset_encoding)
  for bufnr, version in pairs(buffers) do
    undo_break(bufnr)
    if ok and vim.api.nvim_buf_is_loaded(bufnr) and vim.bo[bufnr].modified and same_as_disk(bufnr) then
      vim.bo[bufnr].modified = false
    end
    log.info("applied an edit to %s (%s)", vim.api.nvim_buf_get_name(bufnr), version == "unversioned" and "unversioned changes" or ("version " .. version))
  end
  require("lsp_agent.next_edit").after_agent_edit(buffers)
  if not ok then
    log.warn("could not apply the agent's edit: %s", result)
    return { applied = false, failureReason = tostring(result) }
  end
  return { applied = true }
end

function M.handlers()
  require("lsp_agent.review") -- follows `review_update`s: signs and the quickfix list
  return {
    [protocol.server_notifications.update] = on_update,
    [protocol.server_requests.request_permission] = on_permission,
    [protocol.server_requests.ask_question] = on_question,
    [protocol.server_requests.editor_query] = require("lsp_agent.editor_query").handler,
    [protocol.server_requests.save_documents] = require("lsp_agent.save").handler,
    ["workspace/applyEdit"] = on_apply_edit,
    ["$/progress"] = require("lsp_agent.startup").on_progress,
    ["window/showMessage"] = require("lsp_agent.startup").on_show_message,
    ["window/logMessage"] = require("lsp_agent.completion").on_log_message, -- the completion cap's note
  }
end

return M
