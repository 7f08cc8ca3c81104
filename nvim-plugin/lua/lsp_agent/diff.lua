--- A proposed edit as a native diff: one tab per file, the current text on the left and the
--- agent's proposal on the right, in diff mode (texts from `agent/diff/get`).
local client_mod = require("lsp_agent.client")
local config = require("lsp_agent.config")
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

local function scratch(name, text, filetype)
  local existing = vim.fn.bufnr(name)
  if existing ~= -1 then
    pcall(vim.api.nvim_buf_delete, existing, { force = true })
  end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, name)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, text_lines(text))
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].modifiable = false
  if filetype then
    vim.bo[buf].filetype = filetype
  end
  return buf
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

--- Open the diff of one file; returns the tab page. `hint`: what closing the tab does.
function M.show(result, change_set_id, hint)
  local path = vim.uri_to_fname(result.uri)
  local shown = util.display_path(path)
  local filetype = vim.filetype.match({ filename = path })
  vim.cmd("tabnew")
  local tab = vim.api.nvim_get_current_tabpage()
  local placeholder = vim.api.nvim_get_current_buf()
  local left = scratch(("lsp-agent://diff/%s/current/%s"):format(change_set_id, shown), result.baseText, filetype)
  local right = scratch(("lsp-agent://diff/%s/proposed/%s"):format(change_set_id, shown), result.proposedText, filetype)
  vim.api.nvim_win_set_buf(0, left)
  if vim.api.nvim_buf_is_valid(placeholder) and placeholder ~= left then
    pcall(vim.api.nvim_buf_delete, placeholder, { force = true })
  end
  map_close(left)
  map_close(right)
  vim.wo.winbar = "current: " .. util.escape_status(shown)
  vim.cmd("diffthis")
  vim.cmd("rightbelow vsplit")
  vim.api.nvim_win_set_buf(0, right)
  local key = config.options.keymaps.diff.close
  local closing = key and (key .. " or :tabclose") or ":tabclose"
  local suffix = hint and (" │ %s: %s"):format(closing, hint) or ""
  vim.wo.winbar = util.escape_status("proposed by the agent: " .. shown .. suffix)
  vim.cmd("diffthis")
  vim.t[tab].lsp_agent_diff = change_set_id
  return tab
end

--- Fetch and show every file of a change set; `cb(tabs)` when done. `opts.hint`: shown in
--- the winbar, what closing the tab does.
function M.open(client, session_id, change_set_id, uris, cb, opts)
  local hint = opts and opts.hint
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
            table.insert(tabs, M.show(results[j], change_set_id, hint))
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
