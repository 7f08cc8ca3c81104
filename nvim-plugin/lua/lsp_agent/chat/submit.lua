--- Sending from the chat: the prompt area's text with its mentions' blocks and the focus as
--- `context`, and the user message under the cursor (what undo and rewind go back to).
local config = require("lsp_agent.config")
local focus_chip = require("lsp_agent.chat.focus_chip")
local focus_mod = require("lsp_agent.focus")
local log = require("lsp_agent.log")
local state = require("lsp_agent.chat.state")

local M = {}

--- The user message under the cursor of a chat buffer (its `## You` line or its text).
function M.message_at_cursor()
  local view, session_id = state.view_of(vim.api.nvim_get_current_buf())
  if not view or vim.api.nvim_get_current_buf() ~= view.chat_buf then
    return nil
  end
  return (view.users or {})[vim.api.nvim_win_get_cursor(0)[1]], session_id
end

--- Send the prompt area's text.
function M.submit(session_id)
  local view = state.views[session_id]
  if not view or not vim.api.nvim_buf_is_valid(view.prompt_buf) then
    return
  end
  local text = vim.trim(table.concat(vim.api.nvim_buf_get_lines(view.prompt_buf, 0, -1, false), "\n"))
  if text == "" then
    return
  end
  vim.api.nvim_buf_set_lines(view.prompt_buf, 0, -1, false, {})
  M.send(session_id, text)
end

--- The blocks and `context` of a prompt written in the chat: the text, its mentions' blocks,
--- and the focus (unless turned off, or removed for this prompt; a `#selection` mention sends
--- the selection regardless).
function M.prompt_parts(session_id, text)
  local view = state.views[session_id] or {}
  local f = view.focus or focus_mod.from_last(state.last_file_buf)
  local mentions = require("lsp_agent.mentions")
  local parsed = mentions.parse(text, view.symbols, mentions.root(), f and f.uri)
  local context = {}
  if config.options.send_focus and f and not view.focus_off then
    context = focus_mod.context(f)
  elseif parsed.selection and f then
    context = focus_mod.context(f, true)
  end
  local blocks = { { type = "text", text = text } }
  vim.list_extend(blocks, parsed.blocks)
  return blocks, context
end

--- Send `text` to a session, with its mentions and the focus. `extra`: more of the
--- prompt's params (`until`).
function M.send(session_id, text, extra)
  local client = require("lsp_agent.client").get(session_id)
  if not client then
    return log.error("the server is not running")
  end
  local blocks, context = M.prompt_parts(session_id, text)
  require("lsp_agent.actions").send_prompt(client, session_id, blocks, context, nil, extra)
  -- the selection went with this prompt; the file and cursor stay the focus
  local view = state.views[session_id]
  if view and view.focus then
    view.focus.selection, view.focus.selected_text = nil, nil
    focus_chip.set_focus(view, view.focus)
  end
end

function M.clear_prompt(session_id)
  local view = state.views[session_id]
  if view and view.prompt_buf and vim.api.nvim_buf_is_valid(view.prompt_buf) then
    vim.api.nvim_buf_set_lines(view.prompt_buf, 0, -1, false, {})
  end
end

return M
