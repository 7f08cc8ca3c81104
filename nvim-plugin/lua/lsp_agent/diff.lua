--- A proposed edit as a native diff: one tab per file, the current text on the left and the
--- agent's proposal on the right, in diff mode (texts from `agent/diff/get`).
---
--- For a pending permission the proposal side is editable: what the user makes of it is
--- what lands when the ask is allowed (`modifiedContent`, see `lsp_agent.permission`). Its
--- buffer outlives the tab until the ask is answered, so closing the diff keeps the edits.
local client_mod = require("lsp_agent.client")
local config = require("lsp_agent.config")
local labels = require("lsp_agent.diff_labels")
local log = require("lsp_agent.log")
local protocol = require("lsp_agent.protocol")
local util = require("lsp_agent.util")

local M = {}

local function text_lines(text)
  local lines = vim.split(text or "", "\n", { plain = true })
  if #lines > 1 and lines[#lines] == "" then
    table.remove(lines)
  end
  return lines
end

--- The editable proposal buffers: bufnr -> { uri, change_set_id, text (the agent's) }.
M.proposals = {}

local function scratch(name, text, filetype, editable)
  local existing = vim.fn.bufnr(name)
  if existing ~= -1 then
    if M.proposals[existing] and editable then
      return existing -- shown again: the user's edits stay
    end
    M.proposals[existing] = nil
    pcall(vim.api.nvim_buf_delete, existing, { force = true })
  end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, name)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, text_lines(text))
  vim.bo[buf].bufhidden = editable and "hide" or "wipe"
  vim.bo[buf].modifiable = editable or false
  vim.bo[buf].modified = false
  if filetype then
    vim.bo[buf].filetype = filetype
  end
  return buf
end

--- The whole text of a proposal buffer, ending in a newline when the agent's text did.
local function buffer_text(buf, original)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  if #lines == 1 and lines[1] == "" and original == "" then
    return ""
  end
  local text = table.concat(lines, "\n")
  if (original or ""):sub(-1) == "\n" or original == nil then
    text = text .. "\n"
  end
  return text
end

--- The proposals of a change set the user changed: uri -> the whole new text.
function M.edited(change_set_id)
  local edited = {}
  for buf, proposal in pairs(M.proposals) do
    if proposal.change_set_id == change_set_id and vim.api.nvim_buf_is_valid(buf) then
      local text = buffer_text(buf, proposal.text)
      if text ~= proposal.text then
        edited[proposal.uri] = text
      end
    end
  end
  return edited
end

--- The ask of a change set is answered: its proposal buffers are no longer editable (those
--- on screen stay readable, the others are deleted).
function M.forget(change_set_id)
  for buf, proposal in pairs(M.proposals) do
    if proposal.change_set_id == change_set_id then
      M.proposals[buf] = nil
      if vim.api.nvim_buf_is_valid(buf) then
        if #vim.fn.win_findbuf(buf) > 0 then
          vim.bo[buf].modifiable = false
          vim.bo[buf].bufhidden = "wipe"
        else
          pcall(vim.api.nvim_buf_delete, buf, { force = true })
        end
      end
    end
  end
end

--- The close key of the diff buffers: closes the tab (`:tabclose` does the same).
local function map_close(buf)
  local key = config.options.keymaps.diff.close
  if key then
    vim.keymap.set("n", key, function()
      if #vim.api.nvim_list_tabpages() > 1 then
        pcall(vim.cmd, "tabclose")
      end
    end, { buffer = buf, nowait = true, desc = "lsp-agent: close the diff" })
  end
end

--- Open the diff of one file; returns the tab page. `hint`: what closing the tab does (or
--- { hint, shorter hint } for narrow windows);
--- `editable`: the proposal side can be edited (a pending permission).
function M.show(result, change_set_id, hint, editable)
  local path = vim.uri_to_fname(result.uri)
  local shown = util.display_path(path)
  local filetype = vim.filetype.match({ filename = path })
  vim.cmd("tabnew")
  local tab = vim.api.nvim_get_current_tabpage()
  local placeholder = vim.api.nvim_get_current_buf()
  local left = scratch(("lsp-agent://diff/%s/current/%s"):format(change_set_id, shown), result.baseText, filetype)
  local right = scratch(("lsp-agent://diff/%s/proposed/%s"):format(change_set_id, shown), result.proposedText, filetype, editable)
  if editable then
    M.proposals[right] = M.proposals[right] or { uri = result.uri, change_set_id = change_set_id, text = result.proposedText or "" }
  end
  vim.api.nvim_win_set_buf(0, left)
  if vim.api.nvim_buf_is_valid(placeholder) and placeholder ~= left then
    pcall(vim.api.nvim_buf_delete, placeholder, { force = true })
  end
  map_close(left)
  map_close(right)
  local key = config.options.keymaps.diff.close or nil
  labels.set_winbar({ side = "current", path = shown })
  vim.cmd("diffthis")
  vim.cmd("rightbelow vsplit")
  vim.api.nvim_win_set_buf(0, right)
  if type(hint) == "table" then
    labels.set_winbar({ side = "proposed", path = shown, editable = editable, close = key, hint = hint[1], short_hint = hint[2] })
  else
    labels.set_winbar({ side = "proposed", path = shown, editable = editable, close = key, hint = hint })
  end
  vim.cmd("diffthis")
  vim.t[tab].lsp_agent_diff = change_set_id
  labels.label_tab(tab, path)
  return tab
end

--- Fetch and show every file of a change set; `cb(tabs)` when done. `opts.hint`: shown in
--- the winbar, what closing the tab does (or { hint, shorter hint }); `opts.editable`: the proposals can be edited.
function M.open(client, session_id, change_set_id, uris, cb, opts)
  local hint = opts and opts.hint
  local editable = opts and opts.editable or false
  local tabs = {}
  local pending = #uris
  if pending == 0 then
    log.warn("the change set has no files")
    return cb and cb(tabs)
  end
  local results = {}
  for i, uri in ipairs(uris) do
    client_mod.request(client, protocol.requests.diff_get, {
      sessionId = session_id,
      changeSetId = change_set_id,
      uri = uri,
    }, function(err, result)
      results[i] = (not err) and result or nil
      pending = pending - 1
      if pending == 0 then
        for j = 1, #uris do
          if results[j] then
            table.insert(tabs, M.show(results[j], change_set_id, hint, editable))
          end
        end
        if cb then
          cb(tabs)
        end
      end
    end)
  end
end

--- Close the tabs `open` made (those still open).
function M.close(tabs)
  for _, tab in ipairs(tabs or {}) do
    if vim.api.nvim_tabpage_is_valid(tab) and #vim.api.nvim_list_tabpages() > 1 then
      local number = vim.api.nvim_tabpage_get_number(tab)
      pcall(vim.cmd, "tabclose! " .. number)
    end
  end
end

return M
