--- The context gauge in the chat window's 'statusline', and the user's own 'statusline'
--- component (the server starting, or the current session's state).
local session = require("lsp_agent.session")
local state = require("lsp_agent.chat.state")
local util = require("lsp_agent.util")
local winbar = require("lsp_agent.chat.winbar")

local M = {}

--- For 'statusline': "agent: starting…" / "agent: failed to start" while the server starts
--- or after it could not, else the current session's state; "" when there is none.
function M.statusline()
  local starting = require("lsp_agent.startup").summary()
  if starting then
    return starting == "starting" and "agent: starting…" or "agent: failed to start"
  end
  local s = session.current and session.sessions[session.current]
  if not s then
    return ""
  end
  local text = "agent: " .. (s.pending_permission and "? permission" or winbar.STATE_TEXT[s.state] or s.state)
  local u = s.usage
  if u and u.contextSize and u.contextSize > 0 then
    text = text .. (" %d%%"):format(math.floor(100 * (u.contextUsed or 0) / u.contextSize + 0.5))
  end
  return text
end

--- Past this share of the context window the gauge offers to compact.
M.COMPACT_AT = 0.8
M.GAUGE_CELLS = 10
M.COMPACT_HINT = "Compact now: :LspAgent compact"

--- The context gauge of a session: "ctx ▕███░░░░░░░▏ 31% · $0.0123", with the compact hint
--- past 80 %; "" before the first `usage_update` that knows the window's size.
function M.gauge_text(s, width)
  local u = s and s.usage
  if not u or not u.contextSize or u.contextSize <= 0 then
    return ""
  end
  local share = math.max(0, math.min(1, (u.contextUsed or 0) / u.contextSize))
  local filled = math.floor(share * M.GAUGE_CELLS + 0.5)
  local bar = "▕" .. ("█"):rep(filled) .. ("░"):rep(M.GAUGE_CELLS - filled) .. "▏"
  local text = ("ctx %s %d%%"):format(bar, math.floor(100 * share + 0.5))
  local cost = util.nn(u.cost)
  if type(cost) == "number" then
    text = text .. (" · $%.4f"):format(cost)
  end
  if share >= M.COMPACT_AT then
    local hinted = text .. " · " .. M.COMPACT_HINT
    if not width or util.width_of(hinted) <= width then
      return hinted
    end
    return text .. " · compact!"
  end
  return text
end

--- The chat window's 'statusline': the gauge.
function M.gauge()
  local s, width = state.drawn_window()
  local text = M.gauge_text(s, width)
  local group = s and s.usage and s.usage.contextSize and s.usage.contextSize > 0
    and (s.usage.contextUsed or 0) / s.usage.contextSize >= M.COMPACT_AT
    and "%#WarningMsg#" or ""
  return group .. util.escape_status(text)
end

return M
