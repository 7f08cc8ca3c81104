--- One tool call in the chat: its line (icon, title, status, location) and the output of a
--- finished command shown under it.
local util = require("lsp_agent.util")

local M = {}

local STATUS = {
  pending = "pending",
  in_progress = "running",
  completed = "done",
  failed = "failed",
  cancelled = "cancelled",
  interrupted = "interrupted",
}
local ICON = {
  pending = "○",
  in_progress = "◐",
  completed = "✓",
  failed = "✗",
  cancelled = "⊘",
  interrupted = "■",
  refused = "⊘",
}

--- Where a tool call points: { path, line? } or nil.
function M.tool_location(tool)
  local location = type(tool.locations) == "table" and tool.locations[1]
  if location and location.uri then
    local line = location.range and location.range.start and location.range.start.line
    return { path = vim.uri_to_fname(location.uri), line = line }
  end
  local input = type(tool.rawInput) == "table" and tool.rawInput or {}
  local path = input.file_path or input.path
  if type(path) == "string" and path ~= "" then
    if not path:match("^/") and tool.cwd then
      path = tool.cwd .. "/" .. path
    end
    return { path = path, line = nil }
  end
end

--- A finished command's exit status (bash sends `exitCode`), or nil.
local function exit_code(tool)
  local code = util.nn(tool.exitCode)
  return type(code) == "number" and code or nil
end

function M.tool_status(tool)
  local code = exit_code(tool)
  if code and tool.status == "completed" then
    return ("exit %d"):format(code)
  end
  if tool.permission == "asked" then
    return "awaiting permission"
  end
  if tool.question == "asked" then
    return "awaiting answer"
  end
  if tool.permission == "rejected" and tool.status ~= "in_progress" then
    return "denied" .. (tool.permission_reason and (": " .. tool.permission_reason) or "")
  end
  if tool.refused then
    -- the person or a rule said no: not a failure of the tool (protocol.md `refused`)
    return "refused"
  end
  return STATUS[tool.status] or tool.status or "pending"
end

--- One line for a tool call: icon, name, the server's title for it (the tool's own words,
--- e.g. "Run python3 hello.py"), [status], → location.
function M.tool_line(tool)
  local title = util.nn(tool.title) or ""
  local name = tool.toolName or tool.tool_kind or "tool"
  local icon = ICON[tool.status] or "○"
  if tool.status == "completed" and (exit_code(tool) or 0) ~= 0 then
    icon = ICON.failed
  elseif tool.refused or (tool.permission == "rejected" and tool.status ~= "in_progress") then
    icon = ICON.refused
  end
  local line = ("- %s %s"):format(icon, name)
  if title ~= "" and title ~= name then
    line = line .. " " .. title:gsub("\n", " ")
  end
  line = line .. (" [%s]"):format(M.tool_status(tool))
  local location = M.tool_location(tool)
  if location then
    line = line .. " → " .. util.display_path(location.path) .. (location.line and (":" .. (location.line + 1)) or "")
  end
  return line
end

--- Lines of a finished command's output shown under its line: the last ones stay visible,
--- the ones before them (up to OUTPUT_LINES in all) are in a closed fold (`za` opens it).
M.OUTPUT_LINES = 30
M.OUTPUT_VISIBLE = 3
M.OUTPUT_PREFIX = "  ┆ "

--- The output lines of a finished command call (bash: its output without the "Exit code"
--- line the tool line shows), or nil for other calls.
function M.output_lines(tool)
  local finished = tool.status == "completed" or tool.status == "failed" or tool.status == "interrupted"
  if not finished or (tool.tool_kind ~= "execute" and tool.toolName ~= "bash") then
    return nil
  end
  local text = ""
  for _, block in ipairs(util.nn(tool.content) or {}) do
    if block.type == "text" and type(block.text) == "string" then
      text = text .. block.text
    end
  end
  local lines = vim.split(text, "\n", { plain = true })
  -- the status the tool appends ("Exit code: N" and what follows it): on the tool line already
  for i = #lines, math.max(1, #lines - 3), -1 do
    if lines[i]:match("^Exit code: %-?%d+") then
      lines = vim.list_slice(lines, 1, i - 1)
      break
    end
  end
  while #lines > 0 and lines[#lines]:match("^%s*$") do
    table.remove(lines)
  end
  if #lines == 0 then
    return nil
  end
  local dropped = math.max(0, #lines - M.OUTPUT_LINES)
  return vim.list_slice(lines, dropped + 1), dropped
end


return M
