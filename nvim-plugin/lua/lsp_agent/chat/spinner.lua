--- The working indicator: a spinner frame that turns while a session's turn runs, so the
--- chat's winbar shows the agent is at work (and stops once no turn runs). The timer only
--- redraws the winbars; the chat buffer is not rendered again for it.
local session = require("lsp_agent.session")

local M = {}

M.FRAMES = { "⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏" }
M.INTERVAL_MS = 120

local frame = 1
local timer = nil

--- Whether `s` is working: a turn runs and nothing waits for the user.
function M.working(s)
  return s ~= nil and s.state == "running" and not s.pending_permission
end

--- The current frame.
function M.frame()
  return M.FRAMES[frame]
end

local function any_working()
  for _, s in pairs(session.sessions) do
    if M.working(s) then
      return true
    end
  end
  return false
end

local function stop()
  if timer then
    timer:stop()
    timer:close()
    timer = nil
  end
end

local function tick()
  if not any_working() then
    stop()
    return
  end
  frame = frame % #M.FRAMES + 1
  vim.cmd("redrawstatus!")
end

--- Start or stop the timer after a session changed.
function M.follow(s)
  if M.working(s) and not timer then
    timer = vim.uv.new_timer()
    timer:start(M.INTERVAL_MS, M.INTERVAL_MS, vim.schedule_wrap(tick))
  elseif timer and not any_working() then
    stop()
  end
end

session.on_change(M.follow)

return M
