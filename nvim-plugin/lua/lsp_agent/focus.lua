--- The user's focus sent with a prompt (`context` of `agent/session/prompt`): the active
--- file, the cursor and, when the prompt came from Visual mode or a range, the selection with
--- its text. Captured where the user was; the chat shows it as a chip ("a.py:12-18").
local util = require("lsp_agent.util")

local M = {}

--- The longest selected text sent (the contract's cap).
M.MAX_TEXT = 100000

--- The last file window the user left: { bufnr, cursor = {row, col} }.
M.last = nil

--- An LSP position of a buffer's (0-based row, byte col).
local function position(bufnr, row, col)
  return { line = row, character = util.utf16_col(bufnr, row, col) }
end

--- The selection of lines `line1`..`line2` (1-based) of `bufnr`: the last Visual selection's
--- exact columns when it covered those lines (a `:'<,'>` command), whole lines otherwise.
--- Returns the LSP range and the byte positions {sr, sc, er, ec} (end exclusive).
local function selection(bufnr, line1, line2)
  local line_count = vim.api.nvim_buf_line_count(bufnr)
  line1 = math.max(1, math.min(line1, line_count))
  line2 = math.max(line1, math.min(line2, line_count))
  local start = vim.api.nvim_buf_get_mark(bufnr, "<")
  local stop = vim.api.nvim_buf_get_mark(bufnr, ">")
  local sr, sc, er, ec = line1 - 1, 0, line2 - 1, nil
  local mode = vim.fn.visualmode()
  if mode == "v" and start[1] == line1 and stop[1] == line2 then
    local last = vim.api.nvim_buf_get_lines(bufnr, line2 - 1, line2, false)[1] or ""
    sc = start[2]
    -- the mark is on the last character's first byte: the selection includes that character
    local char_end = stop[2] + 1
    while char_end <= #last and vim.str_utf_start(last, char_end + 1) ~= 0 do
      char_end = char_end + 1
    end
    ec = math.min(char_end, #last)
  end
  if not ec then
    ec = #(vim.api.nvim_buf_get_lines(bufnr, er, er + 1, false)[1] or "")
  end
  local range = { start = position(bufnr, sr, sc), ["end"] = position(bufnr, er, ec) }
  return range, { sr, sc, er, ec }
end

--- The focus of `win` (showing a file buffer) now: its file, cursor and, with `range`
--- ({line1, line2}), the selection and its text. nil outside a file buffer.
function M.capture(win, range)
  win = win or vim.api.nvim_get_current_win()
  local bufnr = vim.api.nvim_win_get_buf(win)
  if not util.is_file_buffer(bufnr) then
    return nil
  end
  local cursor = vim.api.nvim_win_get_cursor(win)
  local focus = {
    bufnr = bufnr,
    uri = vim.uri_from_bufnr(bufnr),
    cursor = position(bufnr, cursor[1] - 1, cursor[2]),
    raw_cursor = cursor,
  }
  if range and range[1] then
    local lsp_range, bytes = selection(bufnr, range[1], range[2] or range[1])
    local text = table.concat(vim.api.nvim_buf_get_text(bufnr, bytes[1], bytes[2], bytes[3], bytes[4], {}), "\n")
    if text ~= "" then
      focus.selection = lsp_range
      focus.selected_text = vim.fn.strcharpart(text, 0, M.MAX_TEXT)
    end
  end
  return focus
end

--- The focus of the last file window the user left (cursor as it was then), else of
--- `fallback` (a file buffer) at its last cursor position; nil without either.
function M.from_last(fallback)
  local last = M.last
  if not last or not util.is_file_buffer(last.bufnr) or not vim.api.nvim_buf_is_loaded(last.bufnr) then
    if not fallback or not util.is_file_buffer(fallback) or not vim.api.nvim_buf_is_loaded(fallback) then
      return nil
    end
    last = { bufnr = fallback, cursor = vim.api.nvim_buf_get_mark(fallback, '"') }
  end
  local row = math.max(1, math.min(last.cursor[1], vim.api.nvim_buf_line_count(last.bufnr)))
  return {
    bufnr = last.bufnr,
    uri = vim.uri_from_bufnr(last.bufnr),
    cursor = position(last.bufnr, row - 1, last.cursor[2]),
    raw_cursor = last.cursor,
  }
end

--- The chip of a focus: "a.py:12-18", "a.py:12" or "a.py" (no selection).
function M.chip(focus)
  return (util.chip(focus.uri, focus.selection):gsub("^<", ""):gsub(">$", ""))
end

--- The prompt's `context` of a focus; `selection_only`: just the selection (a `#selection`
--- mention with the focus turned off).
function M.context(focus, selection_only)
  local context = {}
  if not focus then
    return context
  end
  if not selection_only then
    context.activeDocument = { uri = focus.uri }
    context.cursor = focus.cursor
  end
  if focus.selection then
    context.selection = focus.selection
    context.selectedText = focus.selected_text
  end
  return context
end

--- Follow the file windows the user leaves, for the focus of prompts written in the chat.
function M.setup()
  local group = vim.api.nvim_create_augroup("lsp_agent_focus", { clear = true })
  vim.api.nvim_create_autocmd("WinLeave", {
    group = group,
    callback = function()
      local bufnr = vim.api.nvim_get_current_buf()
      if util.is_file_buffer(bufnr) and vim.api.nvim_win_get_config(0).relative == "" then
        M.last = { bufnr = bufnr, cursor = vim.api.nvim_win_get_cursor(0) }
      end
    end,
  })
end

return M
