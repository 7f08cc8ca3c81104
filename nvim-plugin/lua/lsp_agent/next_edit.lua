--- Next-edit suggestions (`agent/nextEdit`, protocol.md): after an edit pauses
--- (`next_edit.debounce`, the user's or the agent's), the server may suggest one edit
--- anywhere in the file. It is shown where it would land — the replaced text struck
--- (`LspAgentNextEditDelete`), the new text as virtual text (`LspAgentNextEdit`), the reason at
--- the line's end, a sign — and, while it is shown, `<Tab>` in normal mode jumps to it and a
--- second `<Tab>` there applies it as one undo step; `<Esc>` or any change to the buffer
--- rejects it. Both are reported (`agent/nextEdit/feedback`), so the agent knows what the user
--- took. A suggestion for a version the buffer has left is never shown.
---
--- Asked only from servers that offer inline completion (`completion.enabled` in the folder's
--- config): it spends the same completion model's tokens.
local config = require("lsp_agent.config")
local keys = require("lsp_agent.keys")
local log = require("lsp_agent.log")
local protocol = require("lsp_agent.protocol")
local shared = require("lsp_agent.suggestion")

local M = {}

M.ns = vim.api.nvim_create_namespace("lsp_agent_next_edit")
--- Per buffer: { client_id, timer, request, suggestion, unsupported }.
M.buffers = {}

vim.api.nvim_set_hl(0, "LspAgentNextEdit", { default = true, link = "DiffAdd" })
vim.api.nvim_set_hl(0, "LspAgentNextEditDelete", { default = true, link = "DiffDelete" })
vim.api.nvim_set_hl(0, "LspAgentNextEditSign", { default = true, link = "DiagnosticHint" })
vim.api.nvim_set_hl(0, "LspAgentNextEditReason", { default = true, link = "Comment" })

local group = vim.api.nvim_create_augroup("lsp_agent_next_edit", { clear = true })

local function options()
  return config.options.next_edit or {}
end

local function maps()
  return config.options.keymaps.next_edit or {}
end

local cursor = shared.cursor

local function unmap(bufnr, state)
  for lhs, entry in pairs(state.mapped or {}) do
    keys.restore(bufnr, "n", lhs, entry.replaced)
  end
  state.mapped = nil
end

--- Hide the suggestion and report what became of it (`accepted`; nil: not reported, e.g. it
--- was never shown).
function M.resolve(bufnr, accepted)
  local state = M.buffers[bufnr]
  local suggestion = state and state.suggestion
  if not suggestion then
    return
  end
  state.suggestion = nil
  if vim.api.nvim_buf_is_valid(bufnr) then
    vim.api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
    unmap(bufnr, state)
  end
  if accepted ~= nil then
    local client = vim.lsp.get_client_by_id(suggestion.client_id)
    if client and not client:is_stopped() then
      client:notify(protocol.notifications.next_edit_feedback, { id = suggestion.id, accepted = accepted })
    end
    log.info("next edit %s %s", suggestion.id, accepted and "accepted" or "rejected")
  end
end

--- Apply the shown suggestion as one undo step; the cursor goes to its end.
function M.accept(bufnr)
  local state = M.buffers[bufnr]
  local s = state and state.suggestion
  if not s or vim.b[bufnr].changedtick ~= s.tick then
    return false
  end
  local r = s.range
  require("lsp_agent.handlers").undo_break(bufnr)
  local end_row, end_col = shared.apply(bufnr, r, s.newText)
  require("lsp_agent.handlers").undo_break(bufnr)
  if vim.api.nvim_get_current_buf() == bufnr then
    -- normal mode: on the last character put in (where the deleted text was, for a deletion)
    pcall(vim.api.nvim_win_set_cursor, 0, { end_row + 1, s.newText ~= "" and math.max(0, end_col - 1) or r[2] })
  end
  M.resolve(bufnr, true)
  return true
end

--- `<Tab>`: jump to the suggestion; pressed again there, accept it.
function M.jump_or_accept(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local state = M.buffers[bufnr]
  local s = state and state.suggestion
  if not s then
    return false
  end
  if vim.b[bufnr].changedtick ~= s.tick then
    M.resolve(bufnr, false)
    return false
  end
  if s.jumped_to and vim.deep_equal(cursor(), s.jumped_to) then
    return M.accept(bufnr)
  end
  vim.cmd("normal! m'")
  vim.api.nvim_win_set_cursor(0, { s.range[1] + 1, s.range[2] })
  s.jumped_to = cursor()
  return true
end

--- `<Esc>`: reject the suggestion.
function M.reject(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local state = M.buffers[bufnr]
  if not (state and state.suggestion) then
    return false
  end
  M.resolve(bufnr, false)
  return true
end

local function map(bufnr, state)
  state.mapped = {}
  local function add(lhs, fn, desc)
    if not lhs or state.mapped[lhs] then
      return
    end
    local prev = vim.api.nvim_buf_call(bufnr, function()
      return keys.previous("n", lhs)
    end)
    local replaced = keys.set(bufnr, "n", lhs, function()
      if not fn(bufnr) then
        keys.fallback(lhs, prev)
      end
    end, desc)
    state.mapped[lhs] = { replaced = replaced }
  end
  add(maps().accept, M.jump_or_accept, "lsp-agent: jump to the next edit / accept it")
  add(maps().reject, function(b)
    -- reject, and let the key do its own work too (<Esc> stays <Esc>)
    M.reject(b)
    return false
  end, "lsp-agent: reject the next edit")
end

local function show(bufnr, state, s)
  local r = s.range
  local lines = vim.split(s.newText, "\n", { plain = true })
  vim.api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
  if r[1] ~= r[3] or r[2] ~= r[4] then
    vim.api.nvim_buf_set_extmark(bufnr, M.ns, r[1], r[2], {
      end_row = r[3],
      end_col = r[4],
      hl_group = "LspAgentNextEditDelete",
      strict = false,
    })
  end
  local virt_lines = {}
  for i = 2, #lines do
    table.insert(virt_lines, { { lines[i], "LspAgentNextEdit" } })
  end
  vim.api.nvim_buf_set_extmark(bufnr, M.ns, r[3], r[4], {
    virt_text = { { lines[1], "LspAgentNextEdit" } },
    virt_text_pos = "inline",
    virt_lines = #virt_lines > 0 and virt_lines or nil,
    strict = false,
  })
  local hint = maps().accept and (" (%s: jump, again: accept)"):format(maps().accept) or ""
  vim.api.nvim_buf_set_extmark(bufnr, M.ns, r[1], 0, {
    sign_text = options().sign or "➜",
    sign_hl_group = "LspAgentNextEditSign",
    virt_text = { { "  next edit: " .. (s.reason ~= "" and s.reason or "suggested") .. hint, "LspAgentNextEditReason" } },
    virt_text_pos = "eol",
  })
  state.suggestion = s
  map(bufnr, state)
  log.info("next edit %s shown at %d:%d: %s", s.id, r[1] + 1, r[2], vim.inspect(s.newText))
end

local function on_result(bufnr, request, err, result)
  local state = M.buffers[bufnr]
  if not state or state.request ~= request then
    return
  end
  state.request = nil
  if err then
    if err.code == -32601 then -- MethodNotFound: a server without next edits
      state.unsupported = true
      log.info("the server has no agent/nextEdit: not asked again in this buffer")
    elseif err.code ~= -32800 then
      log.info("agent/nextEdit failed: %s", err.message or vim.inspect(err))
    end
    return
  end
  if type(result) ~= "table" or type(result.range) ~= "table" or type(result.newText) ~= "string" then
    return -- null: nothing worth suggesting
  end
  local fresh = vim.api.nvim_buf_is_valid(bufnr)
    and vim.b[bufnr].changedtick == request.tick
    and vim.lsp.util.buf_versions[bufnr] == request.version
    and (result.uri == nil or result.uri == request.uri)
  if not fresh then
    log.info("dropped a stale next edit %s (the buffer changed since the request)", tostring(result.id))
    return
  end
  local encoding = request.client.offset_encoding
  local start_row, start_col = shared.to_byte(bufnr, result.range.start, encoding)
  local end_row, end_col = shared.to_byte(bufnr, result.range["end"], encoding)
  if not start_row or not end_row then
    return
  end
  show(bufnr, state, {
    id = tostring(result.id),
    client_id = request.client.id,
    tick = request.tick,
    range = { start_row, start_col, end_row, end_col },
    newText = result.newText,
    reason = type(result.reason) == "string" and result.reason or "",
  })
end

--- Ask the server for the next edit of `bufnr` now.
function M.request(bufnr)
  local state = M.buffers[bufnr]
  local client = state and vim.lsp.get_client_by_id(state.client_id)
  if not client or client:is_stopped() or state.unsupported or not vim.api.nvim_buf_is_loaded(bufnr) then
    return
  end
  shared.cancel(state)
  local win = vim.fn.bufwinid(bufnr)
  local position = { line = 0, character = 0 }
  if win ~= -1 then
    position = vim.lsp.util.make_position_params(win, client.offset_encoding).position
  end
  local uri = vim.uri_from_bufnr(bufnr)
  local request = {
    client = client,
    uri = uri,
    tick = vim.b[bufnr].changedtick,
  }
  state.request = request
  -- the client sends pending didChange first (`bufnr`), so the version is the server's too
  local ok, id = client:request(protocol.requests.next_edit, {
    textDocument = { uri = uri, version = vim.lsp.util.buf_versions[bufnr] },
    position = position,
  }, function(err, result)
    on_result(bufnr, request, err, result)
  end, bufnr)
  request.version = vim.lsp.util.buf_versions[bufnr]
  request.id = id
  if not ok and state.request == request then
    state.request = nil
  end
end

--- The buffer changed (the user typed, or the agent's edit landed): a shown suggestion is
--- rejected, and the server is asked again once the edits pause.
function M.changed(bufnr)
  local state = M.buffers[bufnr]
  if not state or state.unsupported then
    return
  end
  if state.suggestion and vim.b[bufnr].changedtick ~= state.suggestion.tick then
    M.resolve(bufnr, false)
  end
  shared.cancel(state)
  shared.debounce(state, options().debounce or 600, function()
    M.request(bufnr)
  end)
end

--- An agent edit landed in these buffers (`workspace/applyEdit`).
function M.after_agent_edit(buffers)
  for bufnr in pairs(buffers) do
    if M.buffers[bufnr] then
      M.changed(bufnr)
    end
  end
end

--- Start asking for next edits in `bufnr` (a server that offers inline completion).
function M.attach(client, bufnr)
  if options().enabled == false or M.buffers[bufnr] or not client.server_capabilities.inlineCompletionProvider then
    return
  end
  M.buffers[bufnr] = { client_id = client.id }
  vim.api.nvim_create_autocmd({ "TextChanged", "TextChangedI", "TextChangedP" }, {
    group = group,
    buffer = bufnr,
    callback = function()
      M.changed(bufnr)
    end,
  })
end

--- Stop in `bufnr`: a shown suggestion goes unreported (the client is leaving).
function M.detach(bufnr)
  local state = M.buffers[bufnr]
  if not state then
    return
  end
  M.resolve(bufnr, nil)
  shared.close(state)
  M.buffers[bufnr] = nil
  pcall(vim.api.nvim_clear_autocmds, { group = group, buffer = bufnr })
end

return M
