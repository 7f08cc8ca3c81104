--- Buffer-local keys that act only while something is shown (ghost text, a next-edit
--- suggestion) and otherwise do what the key did before: the user's own mapping of it, or
--- Neovim's built-in key.
local M = {}

--- The mapping of `lhs` in `mode` in effect for the current buffer (buffer-local or
--- global), as `maparg()`'s dict; nil when the key is not mapped.
function M.previous(mode, lhs)
  local prev = vim.fn.maparg(lhs, mode, false, true)
  if type(prev) ~= "table" or vim.tbl_isempty(prev) then
    return nil
  end
  return prev
end

--- Press `lhs` as if our mapping were not there: run `prev` (the mapping it replaced) or
--- feed the key unmapped. The keys go in front of the typeahead, so keys typed after it
--- keep their order.
function M.fallback(lhs, prev)
  local function feed(keys, remap)
    vim.api.nvim_feedkeys(keys, (remap and "m" or "n") .. "i", false)
  end
  if not prev then
    return feed(vim.keycode(lhs), false)
  end
  local remap = prev.noremap ~= 1
  if prev.callback then
    local result = prev.callback()
    if prev.expr == 1 and type(result) == "string" then
      feed(prev.replace_keycodes == 1 and vim.keycode(result) or result, remap)
    end
    return
  end
  local rhs = prev.rhs or ""
  if prev.expr == 1 then
    rhs = vim.api.nvim_eval(rhs)
    return feed(prev.replace_keycodes == 1 and vim.keycode(rhs) or rhs, remap)
  end
  feed(vim.keycode(rhs), remap)
end

--- Map `lhs` in `mode` for `bufnr` to `fn`; returns the buffer-local mapping it replaced
--- (for `restore`).
function M.set(bufnr, mode, lhs, fn, desc)
  local replaced
  vim.api.nvim_buf_call(bufnr, function()
    local prev = M.previous(mode, lhs)
    if prev and prev.buffer == 1 then
      replaced = prev
    end
  end)
  vim.keymap.set(mode, lhs, fn, { buffer = bufnr, desc = desc })
  return replaced
end

--- Remove our mapping of `lhs` and put back the buffer-local one it replaced, if any.
function M.restore(bufnr, mode, lhs, replaced)
  if not vim.api.nvim_buf_is_valid(bufnr) then
    return
  end
  pcall(vim.keymap.del, mode, lhs, { buffer = bufnr })
  if replaced then
    vim.api.nvim_buf_call(bufnr, function()
      pcall(vim.fn.mapset, replaced)
    end)
  end
end

return M
