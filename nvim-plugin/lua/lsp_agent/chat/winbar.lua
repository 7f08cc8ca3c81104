--- The chat window's winbar (title, mode · model, usage, state: what gives way first when it
--- is narrow) and the prompt area's (its keys).
local config = require("lsp_agent.config")
local spinner = require("lsp_agent.chat.spinner")
local state = require("lsp_agent.chat.state")
local util = require("lsp_agent.util")

local M = {}

--- The usage at three levels of detail: "full", "short" (context and cost) or "tiny".
local function usage_text(s, detail)
  local u = s.usage
  if not u then
    return nil
  end
  local has_ctx = u.contextSize and u.contextSize > 0
  local percent = has_ctx and math.floor(100 * (u.contextUsed or 0) / u.contextSize + 0.5) or nil
  local cost = util.nn(u.cost)
  if detail == "tiny" then
    return percent and ("%d%%"):format(percent) or nil
  end
  local parts = {}
  if has_ctx then
    if detail == "full" then
      table.insert(parts, ("ctx %s/%s (%d%%)"):format(util.short_number(u.contextUsed), util.short_number(u.contextSize), percent))
    else
      table.insert(parts, ("ctx %d%%"):format(percent))
    end
  end
  if detail == "full" then
    table.insert(parts, ("in %s out %s"):format(util.short_number(u.inputTokens), util.short_number(u.outputTokens)))
  end
  if type(cost) == "number" then
    table.insert(parts, ("$%.4f"):format(cost))
  end
  return #parts > 0 and table.concat(parts, " · ") or nil
end

--- The words for a session state (shared with the statusline).
M.STATE_TEXT = { idle = "idle", running = "● running", requires_action = "? waiting for you" }
local STATE_ICON = { idle = "○", running = "●", requires_action = "?" }
local SEPARATOR = " │ "
local MIN_TITLE = 12

local width_of = util.width_of

--- `text` cut to `width` display cells, with "…" when cut.
M.truncate = util.truncate

local function join(parts)
  return table.concat(
    vim.tbl_filter(function(x)
      return x ~= nil and x ~= ""
    end, parts),
    SEPARATOR
  )
end

--- The winbar of a chat window `width` cells wide (no limit when nil). What gives way first
--- when it is too narrow: the title is cut (down to a few characters), then the "lsp-agent"
--- label, the token counts, the rest of the usage, the title, the model's provider and the
--- state's words (an icon stays); mode and model stay visible.
function M.winbar_text(s, width)
  if not s then
    return "lsp-agent"
  end
  width = width or math.huge
  local title = s.title ~= "" and s.title or "new session"
  local mode, model = s:config_value("mode"), s:config_value("model")
  local function settings(short_model)
    local shown = model
    if short_model and type(model) == "string" then
      shown = model:gsub("^[^/]+/", "")
    end
    return table.concat(
      vim.tbl_filter(function(x)
        return x ~= nil
      end, { mode, shown }),
      " · "
    )
  end
  local words = s.pending_permission and "? permission" or M.STATE_TEXT[s.state] or s.state
  local icon = s.pending_permission and "?" or STATE_ICON[s.state] or s.state
  if spinner.working(s) then
    -- the working indicator: it turns while the turn runs (spinner.lua)
    icon = spinner.frame()
    words = icon .. (s.compacting and " compacting…" or " working…")
  end
  -- from the most to the least detailed; `true` is where the title goes
  -- (no usage yet is "", not nil: a nil would end the level before the state)
  local levels = {
    { "lsp-agent", true, settings(false), usage_text(s, "full") or "", words },
    { true, settings(false), usage_text(s, "full") or "", words },
    { true, settings(false), usage_text(s, "short") or "", words },
    { true, settings(false), usage_text(s, "tiny") or "", words },
    { true, settings(false), words },
    { settings(false), words },
    { settings(true), words },
    { settings(true), icon },
  }
  for _, level in ipairs(levels) do
    local parts, has_title = {}, false
    for _, part in ipairs(level) do
      if part == true then
        has_title = true
        table.insert(parts, "")
      elseif part ~= nil and part ~= "" then
        table.insert(parts, part)
      end
    end
    if has_title then
      local others = {}
      for _, part in ipairs(parts) do
        if part ~= "" then
          table.insert(others, part)
        end
      end
      local room = width - width_of(join(others)) - (#others > 0 and width_of(SEPARATOR) or 0)
      if room >= math.min(MIN_TITLE, width_of(title)) then
        for i, part in ipairs(parts) do
          if part == "" then
            parts[i] = M.truncate(title, room)
          end
        end
        return join(parts)
      end
    elseif width_of(join(parts)) <= width then
      return join(parts)
    end
  end
  -- the last resort: the settings cut, the state's icon kept
  local room = width - width_of(SEPARATOR) - width_of(icon)
  if room < 2 or settings(true) == "" then
    return M.truncate(icon, width)
  end
  return M.truncate(settings(true), room) .. SEPARATOR .. icon
end

function M.winbar()
  local s, width = state.drawn_window()
  return util.escape_status(M.winbar_text(s, width))
end

--- The prompt area's winbar: its keys, as configured, in as much detail as fits.
function M.prompt_winbar()
  local win = vim.g.statusline_winid or vim.api.nvim_get_current_win()
  local width = vim.api.nvim_win_get_width(win)
  local k = config.options.keymaps.prompt
  local forms = {}
  if k.submit and k.submit_insert then
    table.insert(forms, ("Prompt — %s sends (normal mode), %s (insert)"):format(k.submit, k.submit_insert))
    table.insert(forms, ("Prompt — %s/%s sends"):format(k.submit, k.submit_insert))
  elseif k.submit or k.submit_insert then
    table.insert(forms, ("Prompt — %s sends"):format(k.submit or (k.submit_insert .. " (insert)")))
  end
  table.insert(forms, "Prompt")
  for _, text in ipairs(forms) do
    if width_of(text) <= width then
      return util.escape_status(text)
    end
  end
  return util.escape_status(M.truncate("Prompt", width))
end

return M
