--- The chat's buffers and windows: a chat buffer and a prompt buffer per session (with their
--- keys), laid out as a split, a tab or a float; closing them; jumping from the chat to code.
local config = require("lsp_agent.config")
local focus_chip = require("lsp_agent.chat.focus_chip")
local state = require("lsp_agent.chat.state")
local submit = require("lsp_agent.chat.submit")
local tool_card = require("lsp_agent.chat.tool_card")

local M = {}

local function set_buf_options(buf, name, hidden)
  vim.api.nvim_buf_set_name(buf, name)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = hidden
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = "markdown"
end

local function map(buf, mode, lhs, fn, desc)
  if lhs and lhs ~= false then
    vim.keymap.set(mode, lhs, fn, { buffer = buf, nowait = true, desc = "lsp-agent: " .. desc })
  end
end

--- The window to open files in (not the chat's).
local function file_window()
  local ours = { [state.win or -1] = true, [state.prompt_win or -1] = true }
  local prev = vim.fn.win_getid(vim.fn.winnr("#"))
  if prev ~= 0 and not ours[prev] and vim.bo[vim.api.nvim_win_get_buf(prev)].buftype == "" then
    return prev
  end
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if not ours[win] and vim.bo[vim.api.nvim_win_get_buf(win)].buftype == "" and vim.api.nvim_win_get_config(win).relative == "" then
      return win
    end
  end
end

--- Jump to the code reference (`path:line`) or the tool call's location under the cursor.
function M.jump()
  local view = state.view_of(vim.api.nvim_get_current_buf())
  if not view then
    return
  end
  if require("lsp_agent.links").follow(file_window) then
    return
  end
  local tool = view.tools[vim.api.nvim_win_get_cursor(0)[1]]
  local location = tool and tool_card.tool_location(tool)
  if not location then
    return
  end
  local win = file_window()
  if win then
    vim.api.nvim_set_current_win(win)
  else
    vim.cmd("topleft vsplit")
  end
  vim.cmd.edit(vim.fn.fnameescape(location.path))
  if location.line then
    pcall(vim.api.nvim_win_set_cursor, 0, { location.line + 1, 0 })
  end
end

--- Close the chat and prompt windows.
function M.close()
  for _, win in ipairs({ state.prompt_win, state.win }) do
    if win and vim.api.nvim_win_is_valid(win) then
      if #vim.api.nvim_list_wins() > 1 then
        pcall(vim.api.nvim_win_close, win, true)
      else
        vim.cmd("enew")
      end
    end
  end
  state.win, state.prompt_win = nil, nil
end

--- The view of a session, its buffers made (again) when missing; `rebuilt` when the chat
--- buffer was made again after being closed.
function M.make_view(session_id)
  local view = state.views[session_id] or { tools = {}, folds = {} }
  state.views[session_id] = view
  local keymaps = config.options.keymaps
  local rebuilt = false
  if not (view.chat_buf and vim.api.nvim_buf_is_valid(view.chat_buf)) then
    rebuilt = view.chat_buf ~= nil
    local buf = vim.api.nvim_create_buf(false, true)
    set_buf_options(buf, "lsp-agent://chat/" .. session_id, "wipe")
    view.fold_count = 0
    vim.bo[buf].modifiable = false
    view.chat_buf = buf
    local k = keymaps.chat
    map(buf, "n", k.close, M.close, "close the chat")
    map(buf, "n", k.stop, function()
      require("lsp_agent.actions").stop(session_id)
    end, "stop the turn")
    map(buf, "n", k.jump, M.jump, "jump to the tool call's location")
    map(buf, "n", k.retry, function()
      require("lsp_agent.actions").retry(session_id)
    end, "send the last prompt again")
    map(buf, "n", k.prompt, function()
      if state.prompt_win and vim.api.nvim_win_is_valid(state.prompt_win) then
        vim.api.nvim_set_current_win(state.prompt_win)
        vim.cmd("startinsert!")
      end
    end, "write a follow-up")
    map(buf, "n", k.follow, function()
      require("lsp_agent.links").follow(file_window)
    end, "open the code reference under the cursor")
  end
  if not (view.prompt_buf and vim.api.nvim_buf_is_valid(view.prompt_buf)) then
    local buf = vim.api.nvim_create_buf(false, true)
    set_buf_options(buf, "lsp-agent://prompt/" .. session_id, "hide")
    view.prompt_buf = buf
    local k = keymaps.prompt
    map(buf, "n", k.submit, function()
      submit.submit(session_id)
    end, "send the prompt")
    map(buf, "i", k.submit_insert, function()
      vim.cmd("stopinsert")
      submit.submit(session_id)
    end, "send the prompt")
    map(buf, "n", k.stop, function()
      require("lsp_agent.actions").stop(session_id)
    end, "stop the turn")
    map(buf, "n", k.close, M.close, "close the chat")
    map(buf, { "n", "i" }, k.focus, function()
      focus_chip.toggle_focus(session_id)
    end, "remove the focus from the prompt (or bring it back)")
    view.symbols = view.symbols or {}
    require("lsp_agent.mentions").attach(buf, view.symbols)
    vim.api.nvim_create_autocmd("BufEnter", {
      buffer = buf,
      callback = function()
        focus_chip.refresh(view)
      end,
    })
  end
  return view, rebuilt
end

local function size(value, total)
  if value < 1 then
    return math.max(1, math.floor(total * value))
  end
  return math.floor(value)
end

local function set_chat_win_options(win)
  local wo = vim.wo[win]
  wo.wrap = true
  wo.linebreak = true
  wo.number = false
  wo.relativenumber = false
  wo.signcolumn = "no"
  wo.foldmethod = "expr"
  wo.foldexpr = "v:lua.require'lsp_agent.chat'.foldexpr()"
  wo.foldlevel = 0
  wo.foldenable = true
  local layout = config.options.window.layout
  wo.winfixwidth = layout == "vertical"
  wo.winfixheight = layout == "horizontal"
  wo.winbar = "%{%v:lua.require'lsp_agent.chat'.winbar()%}"
  wo.statusline = "%{%v:lua.require'lsp_agent.chat'.gauge()%}"
end

--- Create the chat and prompt windows (or reuse them) for a view.
function M.show(view)
  local w = config.options.window
  local prompt_height = math.floor(w.prompt_height)
  if state.win and vim.api.nvim_win_is_valid(state.win) then
    vim.api.nvim_win_set_buf(state.win, view.chat_buf)
  else
    if w.layout == "float" then
      local width = size(w.float.width, vim.o.columns)
      local height = math.max(3, size(w.float.height, vim.o.lines) - prompt_height - 2)
      local row = math.floor((vim.o.lines - height - prompt_height - 2) / 2)
      local col = math.floor((vim.o.columns - width) / 2)
      state.win = vim.api.nvim_open_win(view.chat_buf, true, {
        relative = "editor",
        width = width,
        height = height,
        row = row,
        col = col,
        border = w.float.border,
      })
      state.prompt_win = vim.api.nvim_open_win(view.prompt_buf, false, {
        relative = "editor",
        width = width,
        height = prompt_height,
        row = row + height + 2,
        col = col,
        border = w.float.border,
      })
    else
      if w.layout == "tab" then
        vim.cmd("tabnew")
      elseif w.layout == "horizontal" then
        vim.cmd((w.position == "top" and "topleft" or "botright") .. " split")
        vim.api.nvim_win_set_height(0, size(w.size, vim.o.lines))
      else
        vim.cmd((w.position == "left" and "topleft" or "botright") .. " vsplit")
        vim.api.nvim_win_set_width(0, size(w.size, vim.o.columns))
      end
      local placeholder = vim.api.nvim_get_current_buf()
      state.win = vim.api.nvim_get_current_win()
      vim.api.nvim_win_set_buf(state.win, view.chat_buf)
      if placeholder ~= view.chat_buf and vim.api.nvim_buf_is_valid(placeholder) and vim.api.nvim_buf_get_name(placeholder) == "" and not vim.bo[placeholder].modified and #vim.fn.win_findbuf(placeholder) == 0 then
        pcall(vim.api.nvim_buf_delete, placeholder, {})
      end
    end
    set_chat_win_options(state.win)
    local chat_win = state.win
    vim.api.nvim_create_autocmd("WinClosed", {
      pattern = tostring(chat_win),
      once = true,
      callback = function()
        vim.schedule(function()
          if state.prompt_win and vim.api.nvim_win_is_valid(state.prompt_win) and #vim.api.nvim_list_wins() > 1 then
            pcall(vim.api.nvim_win_close, state.prompt_win, true)
          end
          if state.win == chat_win then
            state.win, state.prompt_win = nil, nil
          end
        end)
      end,
    })
  end
  set_chat_win_options(state.win)
  if state.prompt_win and vim.api.nvim_win_is_valid(state.prompt_win) then
    vim.api.nvim_win_set_buf(state.prompt_win, view.prompt_buf)
  else
    vim.api.nvim_set_current_win(state.win)
    vim.cmd("belowright split")
    state.prompt_win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(state.prompt_win, view.prompt_buf)
    vim.api.nvim_win_set_height(state.prompt_win, prompt_height)
  end
  vim.wo[state.prompt_win].winfixheight = true
  vim.wo[state.prompt_win].winbar = "%{%v:lua.require'lsp_agent.chat'.prompt_winbar()%}"
  vim.wo[state.prompt_win].number = false
  vim.wo[state.prompt_win].relativenumber = false
  vim.wo[state.prompt_win].signcolumn = "no"
end

return M
