--- The chat: a Markdown buffer per session rendered from its model, a prompt area below it,
--- usage in the winbar. This module opens it and is the public face of its parts, each with
--- one job:
---   state.lua      the views and the chat's windows, shared by the parts
---   render.lua     the chat buffer from the session model (folds, footer)
---   tool_card.lua  one line per tool call, a command's output under it
---   winbar.lua     the chat's and the prompt area's winbars
---   gauge.lua      the context gauge ('statusline') and the user's statusline component
---   focus_chip.lua the focus sent with the next prompt, shown above the prompt area
---   submit.lua     sending the prompt area's text (mentions, focus)
---   spinner.lua    the working indicator that turns in the winbar while a turn runs
---   window.lua     buffers, keys, windows, closing, jumping to code
local focus_chip = require("lsp_agent.chat.focus_chip")
local focus_mod = require("lsp_agent.focus")
local gauge = require("lsp_agent.chat.gauge")
local render = require("lsp_agent.chat.render")
local session = require("lsp_agent.session")
local state = require("lsp_agent.chat.state")
local submit = require("lsp_agent.chat.submit")
local tool_card = require("lsp_agent.chat.tool_card")
local util = require("lsp_agent.util")
local window = require("lsp_agent.chat.window")
local winbar = require("lsp_agent.chat.winbar")

local M = {}

-- `views`, `win`, `prompt_win` and `last_file_buf` live in state.lua: read and written here
-- as before, so `require("lsp_agent.chat").win` stays the chat window
local SHARED = { views = true, win = true, prompt_win = true, last_file_buf = true }
setmetatable(M, {
  __index = function(_, key)
    if SHARED[key] then
      return state[key]
    end
  end,
  __newindex = function(t, key, value)
    if SHARED[key] then
      state[key] = value
    else
      rawset(t, key, value)
    end
  end,
})

M.view_of = state.view_of

M.tool_location = tool_card.tool_location
M.tool_status = tool_card.tool_status
M.tool_line = tool_card.tool_line
M.output_lines = tool_card.output_lines

M.render_lines = render.render_lines
M.render = render.render
M.foldexpr = render.foldexpr

M.truncate = winbar.truncate
M.winbar_text = winbar.winbar_text
M.winbar = winbar.winbar
M.prompt_winbar = winbar.prompt_winbar

M.statusline = gauge.statusline
M.gauge_text = gauge.gauge_text
M.gauge = gauge.gauge

M.chip_text = focus_chip.chip_text
M.render_focus = focus_chip.render_focus
M.set_focus = focus_chip.set_focus
M.toggle_focus = focus_chip.toggle_focus

M.message_at_cursor = submit.message_at_cursor
M.submit = submit.submit
M.prompt_parts = submit.prompt_parts
M.send = submit.send
M.clear_prompt = submit.clear_prompt

M.jump = window.jump
M.close = window.close

session.on_change(render.render)

--- Open the chat of `session_id` (the current session, or a new one, when nil).
--- opts: { focus_prompt = true, insert = false, prompt_text = nil, new = false,
---         range = {line1, line2} (the selection sent as focus), focus = a captured focus
---         or false, on_open = fun(session_id, view) }
function M.open(session_id, opts)
  opts = opts or {}
  -- the focus is where the user was when asking for the chat
  local captured = opts.focus
  if captured == nil then
    captured = focus_mod.capture(vim.api.nvim_get_current_win(), opts.range)
  end
  if not session_id then
    local later = vim.tbl_extend("force", opts, { focus = captured or false })
    return require("lsp_agent.actions").with_session(opts.new, function(_, id)
      M.open(id, later)
    end)
  end
  local s = session.get(session_id)
  session.current = session_id
  local view, rebuilt = window.make_view(session_id)
  if captured then
    M.set_focus(view, captured)
  elseif not view.focus then
    M.set_focus(view, focus_mod.from_last(state.last_file_buf))
  end
  window.show(view)
  if rebuilt and not s.loading then
    -- reopened after closing: rebuild it from the server's log
    local client = require("lsp_agent.client").get(session_id)
    if client then
      require("lsp_agent.handlers").load(client, session_id, 1)
    end
  end
  M.render(s)
  if opts.prompt_text then
    vim.api.nvim_buf_set_lines(view.prompt_buf, 0, -1, false, vim.split(opts.prompt_text, "\n", { plain = true }))
  end
  M.render_focus(view)
  if opts.focus_prompt ~= false then
    vim.api.nvim_set_current_win(state.prompt_win)
    if opts.insert then
      vim.cmd("startinsert!")
    elseif opts.insert == false then
      vim.cmd("stopinsert")
    end
  end
  if opts.on_open then
    opts.on_open(session_id, view)
  end
  return view
end

function M.setup()
  local group = vim.api.nvim_create_augroup("lsp_agent_chat", { clear = true })
  vim.api.nvim_create_autocmd("BufEnter", {
    group = group,
    callback = function(args)
      if util.is_file_buffer(args.buf) then
        state.last_file_buf = args.buf
      end
    end,
  })
end

return M
