--- Small helpers shared by the modules.
local M = {}

--- `vim.NIL` (a JSON null) as nil.
function M.nn(value)
  if value == vim.NIL then
    return nil
  end
  return value
end

--- A file chip: `<path>`, `<path:3>` or `<path:2-5>` (1-based lines of an LSP range).
function M.chip(uri, range)
  local where = M.display_path(uri)
  range = M.nn(range)
  if type(range) == "table" and range.start and range["end"] then
    local first, last = range.start.line + 1, range["end"].line + 1
    -- a range ending at the start of a line does not include that line
    if last > first and range["end"].character == 0 then
      last = last - 1
    end
    where = where .. ":" .. (first == last and tostring(first) or (first .. "-" .. last))
  end
  return "<" .. where .. ">"
end

--- The text of ContentBlock[]: text blocks as they are, one chip per file (a link and the
--- embedded text of the same file, as a ranged ask sends them, are one chip), an image (sent
--- from another editor) as `[image: shot.png]`.
function M.blocks_text(blocks)
  local parts, linked = {}, {}
  for _, block in ipairs(M.nn(blocks) or {}) do
    if block.type == "resource_link" then
      linked[block.uri] = true
    end
  end
  local shown = {}
  for _, block in ipairs(M.nn(blocks) or {}) do
    if block.type == "text" then
      table.insert(parts, block.text)
    elseif block.type == "resource_link" or (block.type == "resource" and not linked[block.uri]) then
      local chip = M.chip(block.uri, block.type == "resource_link" and block.range or nil)
      if not shown[chip] then
        shown[chip] = true
        table.insert(parts, chip)
      end
    elseif block.type == "image" then
      local name = M.nn(block.name)
      table.insert(parts, name and ("[image: " .. name .. "]") or "[image]")
    end
  end
  return table.concat(parts, "\n")
end

--- Only the text blocks of ContentBlock[] (the prompt text to offer again after an undo).
function M.prompt_text(blocks)
  local parts = {}
  for _, block in ipairs(M.nn(blocks) or {}) do
    if block.type == "text" and not block.text:match("^Editor context:") then
      table.insert(parts, block.text)
    end
  end
  return table.concat(parts, "\n")
end

--- A path (or file uri) relative to the current directory when inside it.
function M.display_path(path_or_uri)
  if type(path_or_uri) ~= "string" then
    return ""
  end
  local path = path_or_uri
  if path:match("^file://") then
    path = vim.uri_to_fname(path)
  end
  return vim.fn.fnamemodify(path, ":~:.")
end

--- Whether `bufnr` shows a file (not a scratch, help or terminal buffer).
function M.is_file_buffer(bufnr)
  return vim.api.nvim_buf_is_valid(bufnr)
    and vim.bo[bufnr].buftype == ""
    and vim.api.nvim_buf_get_name(bufnr) ~= ""
end

--- A byte column of a buffer line as a UTF-16 character offset.
function M.utf16_col(bufnr, lnum, col)
  local line = vim.api.nvim_buf_get_lines(bufnr, lnum, lnum + 1, false)[1]
  if not line then
    return col
  end
  col = math.min(col, #line)
  local ok, units = pcall(vim.str_utfindex, line, "utf-16", col, false)
  return ok and units or col
end

--- The UTF-16 length of a buffer line.
function M.utf16_len(bufnr, lnum)
  local line = vim.api.nvim_buf_get_lines(bufnr, lnum, lnum + 1, false)[1] or ""
  local ok, units = pcall(vim.str_utfindex, line, "utf-16", #line, false)
  return ok and units or #line
end

--- A `vim.Diagnostic` as an LSP Diagnostic (range in UTF-16).
function M.to_lsp_diagnostic(d)
  local original = d.user_data and d.user_data.lsp
  local range
  if type(original) == "table" and type(original.range) == "table" then
    range = original.range
  else
    local end_lnum = d.end_lnum or d.lnum
    local end_col = d.end_col or d.col
    range = {
      start = { line = d.lnum, character = M.utf16_col(d.bufnr, d.lnum, d.col or 0) },
      ["end"] = { line = end_lnum, character = M.utf16_col(d.bufnr, end_lnum, end_col or 0) },
    }
  end
  local result = { range = range, message = d.message, severity = d.severity }
  if type(d.source) == "string" then
    result.source = d.source
  end
  if type(d.code) == "string" or type(d.code) == "number" then
    result.code = d.code
  end
  return result
end

local counter = 0
--- A fresh id for `clientMessageId`.
function M.next_id(prefix)
  counter = counter + 1
  return ("%s-%d-%d-%d"):format(prefix, vim.uv.os_getpid(), vim.uv.hrtime() % 1000000007, counter)
end

--- 12345 -> "12.3k".
function M.short_number(n)
  if type(n) ~= "number" then
    return "?"
  end
  if n >= 1000000 then
    return ("%.1fM"):format(n / 1000000)
  end
  if n >= 1000 then
    return ("%.1fk"):format(n / 1000)
  end
  return tostring(n)
end

--- Escape `%` for 'statusline' / 'winbar'.
function M.escape_status(text)
  return (text:gsub("%%", "%%%%"))
end

--- The display width of `text` in cells.
function M.width_of(text)
  return vim.fn.strdisplaywidth(text)
end

--- `text` cut to `width` display cells, with "…" when cut: its end gives way, or its start
--- with `from_left` (a path keeps its file name: "…/pkg/module.py").
function M.truncate(text, width, from_left)
  if M.width_of(text) <= width then
    return text
  end
  if width < 1 then
    return ""
  end
  local n = vim.fn.strchars(text)
  if from_left then
    local start = 0
    while start < n and M.width_of(vim.fn.strcharpart(text, start)) > width - 1 do
      start = start + 1
    end
    return "…" .. vim.fn.strcharpart(text, start)
  end
  while n > 0 and M.width_of(vim.fn.strcharpart(text, 0, n)) > width - 1 do
    n = n - 1
  end
  return vim.fn.strcharpart(text, 0, n) .. "…"
end

return M
