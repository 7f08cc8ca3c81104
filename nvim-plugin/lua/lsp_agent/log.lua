--- The plugin's own log (`:LspAgent log`): a ring of recent entries; warnings and errors are
--- also shown with `vim.notify`.
local M = { entries = {}, max = 2000 }

local LEVELS = { DEBUG = vim.log.levels.DEBUG, INFO = vim.log.levels.INFO, WARN = vim.log.levels.WARN, ERROR = vim.log.levels.ERROR }

local function add(level, notify, fmt, ...)
  local ok, message = pcall(string.format, fmt, ...)
  if not ok then
    message = fmt
  end
  table.insert(M.entries, { time = os.date("%H:%M:%S"), level = level, message = message })
  if #M.entries > M.max then
    table.remove(M.entries, 1)
  end
  if notify then
    vim.schedule(function()
      vim.notify("lsp-agent: " .. message, LEVELS[level])
    end)
  end
end

function M.debug(fmt, ...)
  add("DEBUG", false, fmt, ...)
end

function M.info(fmt, ...)
  add("INFO", false, fmt, ...)
end

--- Logged and shown to the user.
function M.notify(fmt, ...)
  add("INFO", true, fmt, ...)
end

function M.warn(fmt, ...)
  add("WARN", true, fmt, ...)
end

function M.error(fmt, ...)
  add("ERROR", true, fmt, ...)
end

--- The entries as lines, oldest first.
function M.lines()
  local lines = {}
  for _, entry in ipairs(M.entries) do
    for i, line in ipairs(vim.split(entry.message, "\n", { plain = true })) do
      local prefix = i == 1 and ("%s %-5s "):format(entry.time, entry.level) or string.rep(" ", 15)
      table.insert(lines, prefix .. line)
    end
  end
  return lines
end

--- Whether some entry contains `text`.
function M.contains(text)
  for _, entry in ipairs(M.entries) do
    if entry.message:find(text, 1, true) then
      return true
    end
  end
  return false
end

return M
