--- What ghost text (`completion.lua`) and next edits (`next_edit.lua`) share: a per-buffer
--- request that waits for a pause and is cancelled when a newer one goes, positions, and
--- putting a suggestion's text in the buffer.
local M = {}

--- The cursor of the current window as (0-based row, byte column).
function M.cursor()
  local pos = vim.api.nvim_win_get_cursor(0)
  return { pos[1] - 1, pos[2] }
end

--- An LSP position (in the client's `encoding`) as row, byte column; nil past the last line.
function M.to_byte(bufnr, position, encoding)
  local line = vim.api.nvim_buf_get_lines(bufnr, position.line, position.line + 1, false)[1]
  if line == nil then
    return nil
  end
  local ok, col = pcall(vim.str_byteindex, line, encoding, position.character, false)
  return position.line, ok and col or #line
end

--- Cancel `state.request` (`{client, id}`) if it is still in flight: `$/cancelRequest`.
function M.cancel(state)
  local request = state.request
  state.request = nil
  if request and request.id and not request.client:is_stopped() then
    request.client:cancel_request(request.id)
  end
end

--- Run `fn` once `ms` pass without another call for the same `state` (its timer restarts).
function M.debounce(state, ms, fn)
  state.timer = state.timer or vim.uv.new_timer()
  state.timer:start(ms, 0, vim.schedule_wrap(fn))
end

--- Stop and free the state's timer (the buffer is left).
function M.close(state)
  if state.timer and not state.timer:is_closing() then
    state.timer:stop()
    state.timer:close()
  end
end

--- Replace `range` ({row, col, end_row, end_col}, bytes) with `text`; the row and byte column
--- just after the new text.
function M.apply(bufnr, range, text)
  local lines = vim.split(text, "\n", { plain = true })
  vim.api.nvim_buf_set_text(bufnr, range[1], range[2], range[3], range[4], lines)
  local end_row = range[1] + #lines - 1
  return end_row, #lines == 1 and range[2] + #lines[1] or #lines[#lines]
end

return M
