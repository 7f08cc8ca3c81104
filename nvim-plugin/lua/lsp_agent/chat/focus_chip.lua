--- The focus chip above the prompt area: the file, cursor or selection sent with the next
--- prompt, which the user can remove for one prompt (or bring back).
local config = require("lsp_agent.config")
local focus_mod = require("lsp_agent.focus")
local state = require("lsp_agent.chat.state")

local M = {}

local FOCUS_NS = vim.api.nvim_create_namespace("lsp_agent_focus")
vim.api.nvim_set_hl(0, "LspAgentFocusChip", { link = "Special", default = true })

--- The chip line shown above the prompt area, or nil.
function M.chip_text(view)
  if not view or not view.focus or not config.options.send_focus then
    return nil
  end
  local chip = focus_mod.chip(view.focus)
  local key = config.options.keymaps.prompt.focus
  if view.focus_off then
    return ("  %s — not sent with this prompt%s"):format(chip, key and (" (" .. key .. " sends it)") or "")
  end
  return ("▸ %s%s"):format(chip, key and ("   " .. key .. " removes it") or "")
end

--- Show the focus chip of a view above its prompt area.
function M.render_focus(view)
  local buf = view.prompt_buf
  if not buf or not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  vim.api.nvim_buf_clear_namespace(buf, FOCUS_NS, 0, -1)
  local text = M.chip_text(view)
  if not text then
    return
  end
  local group = view.focus_off and "Comment" or "LspAgentFocusChip"
  vim.api.nvim_buf_set_extmark(buf, FOCUS_NS, 0, 0, { virt_lines = { { { text, group } } }, virt_lines_above = true })
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    vim.api.nvim_win_call(win, function()
      if vim.fn.line("w0") == 1 then
        vim.fn.winrestview({ topfill = 1 })
      end
    end)
  end
end

--- Make `f` (a focus, or nil) the view's focus, sent with the next prompt.
function M.set_focus(view, f)
  view.focus = f
  view.focus_off = false
  M.render_focus(view)
end

--- Remove the focus from the next prompt, or bring it back.
function M.toggle_focus(session_id)
  local view = state.views[session_id]
  if view and view.focus then
    view.focus_off = not view.focus_off
    M.render_focus(view)
  end
end

--- Entering the prompt area after moving in a file: the focus follows the cursor.
function M.refresh(view)
  local last = focus_mod.last
  local f = view.focus
  if last and (not f or f.bufnr ~= last.bufnr or not vim.deep_equal(f.raw_cursor, last.cursor)) then
    M.set_focus(view, focus_mod.from_last())
  end
end

return M
