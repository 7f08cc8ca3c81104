--- What every part of the chat shares: the views of the sessions and the one chat layout.
--- One table, so the winbar, the renderer and the windows see the same windows and views.
local M = {
  --- By session id: { chat_buf, prompt_buf, tools = {[lnum] = tool}, folds = {[lnum] = expr},
  --- users = {[lnum] = message id}, focus, focus_off, symbols, fold_count }.
  views = {},
  --- The chat and prompt windows (one chat layout at a time).
  win = nil,
  prompt_win = nil,
  --- The last file buffer the user was in (the chat's "active document").
  last_file_buf = nil,
}

--- The view whose chat or prompt buffer is `bufnr`, and its session id.
function M.view_of(bufnr)
  for id, view in pairs(M.views) do
    if view.chat_buf == bufnr or view.prompt_buf == bufnr then
      return view, id
    end
  end
end

--- The window a 'winbar' or 'statusline' expression is drawn for, its session (or nil) and
--- its width (nil when the window is gone).
function M.drawn_window()
  local win = vim.g.statusline_winid or vim.api.nvim_get_current_win()
  local ok, buf = pcall(vim.api.nvim_win_get_buf, win)
  local _, id = M.view_of(ok and buf or -1)
  local width = ok and vim.api.nvim_win_get_width(win) or nil
  return id and require("lsp_agent.session").sessions[id], width, win
end

return M
