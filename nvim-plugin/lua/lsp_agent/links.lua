--- Code references in the chat (`src/a.py:12`, `src/a.py:12:5`, `/abs/b.ts:3`): `gf`, or
--- `<CR>` on one, opens the file at that line and column. A path needs a file extension or
--- a folder part, so `localhost:8080` and `12:30` are not references; a relative path is
--- looked up in the session's workspace folders, then the current directory.
local M = {}

local PATH = "[%w_%.%-/@+~]+"

M.ns = vim.api.nvim_create_namespace("lsp_agent_links")
vim.api.nvim_set_hl(0, "LspAgentCodeRef", { link = "Underlined", default = true })

--- Whether `path` looks like a file path (an extension, or a folder part).
local function pathlike(path)
  return path:find("/", 1, true) ~= nil or path:match("[^/]%.[%w]+$") ~= nil
end

--- Every reference in `text`: { path, line, column?, first, last } (1-based byte columns).
function M.find(text)
  local found = {}
  for first, path, line, last in text:gmatch("()(" .. PATH .. "):(%d+)()") do
    local column, after = text:match("^:(%d+)()", last)
    local stop = after or last
    local range_end = text:match("^%-%d+()", stop)
    stop = range_end or stop
    local before = first > 1 and text:sub(first - 1, first - 1) or ""
    local next_char = text:sub(stop, stop)
    local clean = path:gsub("[%.]+$", "")
    if
      clean == path
      and pathlike(path)
      and tonumber(line) > 0
      and not before:match("[%w%./:@~%-]")
      and not next_char:match("[%w/]")
    then
      table.insert(found, {
        path = path,
        line = tonumber(line),
        column = column and tonumber(column) or nil,
        first = first,
        last = stop - 1,
      })
    end
  end
  return found
end

--- Underline every reference in `lines`, the text of the chat buffer `buf`.
function M.mark(buf, lines)
  vim.api.nvim_buf_clear_namespace(buf, M.ns, 0, -1)
  for row, text in ipairs(lines) do
    for _, ref in ipairs(M.find(text)) do
      vim.api.nvim_buf_set_extmark(buf, M.ns, row - 1, ref.first - 1, {
        end_col = ref.last,
        hl_group = "LspAgentCodeRef",
      })
    end
  end
end

--- The reference under byte column `col` (0-based, as the cursor's) of `text`, or nil.
function M.at(text, col)
  for _, ref in ipairs(M.find(text)) do
    if col + 1 >= ref.first and col + 1 <= ref.last then
      return ref
    end
  end
end

local function folders()
  local out = {}
  local client = require("lsp_agent.client").get(require("lsp_agent.session").current)
  for _, folder in ipairs(client and client.workspace_folders or {}) do
    table.insert(out, { path = vim.uri_to_fname(folder.uri), name = folder.name })
  end
  if client and client.root_dir then
    table.insert(out, { path = client.root_dir })
  end
  table.insert(out, { path = vim.fn.getcwd() })
  return out
end

--- The file `path` names: absolute as it is, else in the first folder that has it (a path
--- that starts with a folder's own name is tried inside that folder too); nil if none does.
function M.resolve(path)
  local function file(p)
    local stat = vim.uv.fs_stat(p)
    return stat and stat.type == "file" and p or nil
  end
  if path:sub(1, 1) == "/" then
    return file(path)
  end
  local rel = path:gsub("^%./", "")
  for _, folder in ipairs(folders()) do
    local hit = file(vim.fs.joinpath(folder.path, rel))
    if hit then
      return vim.fs.normalize(hit)
    end
    local name = folder.name or vim.fs.basename(folder.path)
    local rest = rel:match("^" .. vim.pesc(name) .. "/(.+)$")
    hit = rest and file(vim.fs.joinpath(folder.path, rest))
    if hit then
      return vim.fs.normalize(hit)
    end
  end
end

--- Open the reference under the cursor in `window` (a function answering the window for
--- files, or nil for a new split). True when there was one (even one not found: said so).
function M.follow(window)
  local line = vim.api.nvim_get_current_line()
  local ref = M.at(line, vim.api.nvim_win_get_cursor(0)[2])
  if not ref then
    return false
  end
  local target = M.resolve(ref.path)
  if not target then
    vim.notify("lsp-agent: " .. ref.path .. " is not in the workspace", vim.log.levels.WARN)
    return true
  end
  local win = window and window()
  if win then
    vim.api.nvim_set_current_win(win)
  else
    vim.cmd("topleft vsplit")
  end
  vim.cmd.edit(vim.fn.fnameescape(target))
  local last = vim.api.nvim_buf_line_count(0)
  pcall(vim.api.nvim_win_set_cursor, 0, { math.min(ref.line, last), math.max((ref.column or 1) - 1, 0) })
  return true
end

return M
