--- The chat: a Markdown buffer per session rendered from its model (streamed text, folded
--- reasoning, one line per tool call, the plan), usage in the winbar, and a prompt area.
local config = require("lsp_agent.config")
local log = require("lsp_agent.log")
local focus_mod = require("lsp_agent.focus")
local session = require("lsp_agent.session")
local util = require("lsp_agent.util")

local M = {}

--- By session id: { chat_buf, prompt_buf, tools = {[lnum] = tool}, folds = {[lnum] = expr} }.
M.views = {}
--- The chat and prompt windows (one chat layout at a time).
M.win = nil
M.prompt_win = nil
--- The last file buffer the user was in (the chat's "active document").
M.last_file_buf = nil

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
}
local PLAN_MARK = { completed = "x", in_progress = "~", pending = " ", cancelled = "-" }

-- rendering -------------------------------------------------------------------------------

local function split(text)
  return vim.split(text or "", "\n", { plain = true })
end

--- What a tool call is about, when it has no title.
local function tool_subject(tool)
  local input = type(tool.rawInput) == "table" and tool.rawInput or {}
  local value = input.command or input.file_path or input.path or input.pattern or input.url or input.description
  if type(value) ~= "string" then
    return ""
  end
  if value:match("^/") or value:match("^file://") then
    value = util.display_path(value)
  end
  return (value:gsub("\n.*", " …"))
end

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
  return STATUS[tool.status] or tool.status or "pending"
end

--- One line for a tool call: icon, name, subject, [status], → location.
function M.tool_line(tool)
  local title = util.nn(tool.title)
  if not title or title == "" then
    title = tool_subject(tool)
  end
  local name = tool.toolName or tool.tool_kind or "tool"
  local icon = ICON[tool.status] or "○"
  if tool.status == "completed" and (exit_code(tool) or 0) ~= 0 then
    icon = ICON.failed
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
local OUTPUT_PREFIX = "  ┆ "

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
  local lines = split(text)
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

local REWOUND = {
  both = "_⟲ undone from here — :LspAgent redo brings it back_",
  conversation = "_⟲ conversation rewound from here (the files stay) — :LspAgent redo brings it back_",
  code = "_⟲ files rewound to before this message (the conversation stays) — :LspAgent redo brings them back_",
}

--- The buffer lines of a session; `tools` maps line numbers to tool calls, `folds` gives the
--- foldexpr of the reasoning lines, `users` maps the lines of each prompt to its message id.
function M.render_lines(s)
  local lines, tools, folds, users = {}, {}, {}, {}
  local function add(line)
    table.insert(lines, line)
  end
  local role, last_kind = nil, nil
  local hidden_from = s.revert and s.revert.message_id
  local scope = s.revert and s.revert.scope or "both"
  local hiding = false
  for _, item in ipairs(s.items) do
    if hidden_from and item.kind == "user" and item.message_id == hidden_from then
      hiding = scope ~= "code"
      add("")
      add(REWOUND[scope] or REWOUND.both)
    end
    if not hiding then
      if item.kind == "user" then
        if #lines > 0 then
          add("")
        end
        add("## You" .. (item.state == "admitted" and " (queued)" or ""))
        users[#lines] = item.message_id
        add("")
        vim.list_extend(lines, split(item.text))
        for lnum = #lines - #split(item.text) + 1, #lines do
          users[lnum] = item.message_id
        end
        if item.context and item.context ~= "" then
          add("> _Editor context_")
          folds[#lines] = ">1"
          for _, line in ipairs(split(item.context)) do
            add("> " .. line)
            folds[#lines] = "1"
          end
        end
        role = "user"
      else
        if role ~= "agent" then
          add("")
          add("## Agent")
          add("")
          role = "agent"
        elseif last_kind and last_kind ~= item.kind and not (last_kind == "tool" and item.kind == "notice") then
          add("")
        end
        if item.kind == "text" then
          vim.list_extend(lines, split(item.text))
        elseif item.kind == "thought" then
          add("> _Thinking_")
          folds[#lines] = ">1"
          for _, line in ipairs(split(item.text)) do
            add("> " .. line)
            folds[#lines] = "1"
          end
        elseif item.kind == "tool" then
          add(M.tool_line(item))
          tools[#lines] = item
          local output, dropped = M.output_lines(item)
          if output then
            local hidden = #output - M.OUTPUT_VISIBLE
            if hidden > 0 then
              local more = hidden + dropped
              add(("%s… %d earlier line%s (za shows them)"):format(OUTPUT_PREFIX, more, more == 1 and "" or "s"))
              folds[#lines] = ">1"
              tools[#lines] = item
            end
            for i, line in ipairs(output) do
              add(OUTPUT_PREFIX .. line)
              tools[#lines] = item
              if i <= hidden then
                folds[#lines] = "1"
              end
            end
          end
        elseif item.kind == "notice" then
          add("_" .. item.text .. "_")
        elseif item.kind == "error" then
          add("**✗ Error:** " .. split(item.text)[1])
          for i, line in ipairs(split(item.text)) do
            if i > 1 then
              add(line)
            end
          end
          if item == s.items[#s.items] and s.state ~= "running" and s.state ~= "requires_action" then
            local key = config.options.keymaps.chat.retry
            local press = key and ("press `" .. key .. "` or ") or ""
            add(("_Retry: %srun `:LspAgent retry` (sends your last prompt again)_"):format(press))
          end
        end
      end
      last_kind = item.kind
    end
  end
  if s.plan and #s.plan > 0 then
    add("")
    add("### Plan")
    add("")
    for _, entry in ipairs(s.plan) do
      local content = entry.status == "cancelled" and ("~~" .. entry.content .. "~~") or entry.content
      add(("- [%s] %s"):format(PLAN_MARK[entry.status] or " ", content))
    end
  end
  local footer
  if s.loading then
    footer = "_loading the session…_"
  elseif s.pending_permission then
    footer = ("_waiting for your permission: %s — `:LspAgent permission` answers_"):format(s.pending_permission.title or "")
  elseif s.state == "requires_action" then
    footer = "_waiting for your answer_"
  elseif s.state == "running" then
    footer = s.compacting and "_compacting…_" or "_working…_"
  elseif s.stop_reason == "cancelled" then
    footer = "_stopped_"
  elseif s.stop_reason == "max_steps" then
    footer = "_stopped: step limit reached_"
  elseif s.stop_reason == "refusal" then
    footer = "_the model refused_"
  end
  if footer then
    add("")
    add(footer)
  end
  if #lines == 0 then
    lines = { "_Type below; <CR> (normal mode) or <C-s> sends._" }
  end
  return lines, tools, folds, users
end

--- 'foldexpr' of chat windows.
function M.foldexpr()
  local view = M.view_of(vim.api.nvim_get_current_buf())
  return view and view.folds[vim.v.lnum] or "0"
end

--- The view whose chat or prompt buffer is `bufnr`.
function M.view_of(bufnr)
  for id, view in pairs(M.views) do
    if view.chat_buf == bufnr or view.prompt_buf == bufnr then
      return view, id
    end
  end
end

function M.render(s)
  local view = M.views[s.id]
  if not view or not view.chat_buf or not vim.api.nvim_buf_is_valid(view.chat_buf) then
    return
  end
  local buf = view.chat_buf
  local lines, tools, folds, users = M.render_lines(s)
  local wins = vim.fn.win_findbuf(buf)
  local follow = {}
  local old_count = vim.api.nvim_buf_line_count(buf)
  for _, win in ipairs(wins) do
    local cursor = vim.api.nvim_win_get_cursor(win)[1]
    follow[win] = cursor >= old_count - 1 or win ~= vim.api.nvim_get_current_win()
  end
  -- before the lines: their change re-evaluates 'foldexpr'
  view.tools, view.folds, view.users = tools, folds, users
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  require("lsp_agent.links").mark(buf, lines)
  -- new folds (reasoning, editor context) start closed; folds the user opened stay open
  local starts = {}
  for lnum, expr in pairs(folds) do
    if expr == ">1" then
      table.insert(starts, lnum)
    end
  end
  table.sort(starts)
  if s.rebuilt then
    view.fold_count = 0
    s.rebuilt = false
  end
  local known = view.fold_count or 0
  view.fold_count = #starts
  for _, win in ipairs(wins) do
    if follow[win] then
      pcall(vim.api.nvim_win_set_cursor, win, { #lines, 0 })
    end
    for i = known + 1, #starts do
      vim.api.nvim_win_call(win, function()
        pcall(vim.cmd, starts[i] .. "foldclose")
      end)
    end
  end
  vim.cmd("redrawstatus!")
end

session.on_change(M.render)

-- winbar and statusline -------------------------------------------------------------------

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

local STATE_TEXT = { idle = "idle", running = "● running", requires_action = "? waiting for you" }
local STATE_ICON = { idle = "○", running = "●", requires_action = "?" }
local SEPARATOR = " │ "
local MIN_TITLE = 12

local function width_of(text)
  return vim.fn.strdisplaywidth(text)
end

--- `text` cut to `width` display cells, with "…" when cut.
function M.truncate(text, width)
  if width_of(text) <= width then
    return text
  end
  if width < 1 then
    return ""
  end
  local n = vim.fn.strchars(text)
  while n > 0 and width_of(vim.fn.strcharpart(text, 0, n)) > width - 1 do
    n = n - 1
  end
  return vim.fn.strcharpart(text, 0, n) .. "…"
end

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
  local state = s.pending_permission and "? permission" or STATE_TEXT[s.state] or s.state
  local icon = s.pending_permission and "?" or STATE_ICON[s.state] or s.state
  -- from the most to the least detailed; `true` is where the title goes
  local levels = {
    { "lsp-agent", true, settings(false), usage_text(s, "full"), state },
    { true, settings(false), usage_text(s, "full"), state },
    { true, settings(false), usage_text(s, "short"), state },
    { true, settings(false), usage_text(s, "tiny"), state },
    { true, settings(false), state },
    { settings(false), state },
    { settings(true), state },
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
  local win = vim.g.statusline_winid or vim.api.nvim_get_current_win()
  local ok, buf = pcall(vim.api.nvim_win_get_buf, win)
  local _, id = M.view_of(ok and buf or -1)
  local width = ok and vim.api.nvim_win_get_width(win) or nil
  return util.escape_status(M.winbar_text(id and session.sessions[id], width))
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
  local text = "agent: " .. (s.pending_permission and "? permission" or STATE_TEXT[s.state] or s.state)
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
    if not width or width_of(hinted) <= width then
      return hinted
    end
    return text .. " · compact!"
  end
  return text
end

--- The chat window's 'statusline': the gauge.
function M.gauge()
  local win = vim.g.statusline_winid or vim.api.nvim_get_current_win()
  local ok, buf = pcall(vim.api.nvim_win_get_buf, win)
  local _, id = M.view_of(ok and buf or -1)
  local width = ok and vim.api.nvim_win_get_width(win) or nil
  local s = id and session.sessions[id]
  local text = M.gauge_text(s, width)
  local group = s and s.usage and s.usage.contextSize and s.usage.contextSize > 0
    and (s.usage.contextUsed or 0) / s.usage.contextSize >= M.COMPACT_AT
    and "%#WarningMsg#" or ""
  return group .. util.escape_status(text)
end

-- buffers and windows ---------------------------------------------------------------------

local function set_buf_options(buf, name, hidden)
  vim.api.nvim_buf_set_name(buf, name)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = hidden
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = "markdown"
end

local function map(buf, mode, lhs, fn, desc)
  if lhs and lhs ~= false then
    vim.keymap.set(mode, lhs, fn, { buffer = buf, nowait = true, desc = "lsp-agent: " .. desc })
  end
end

--- The window to open files in (not the chat's).
local function file_window()
  local ours = { [M.win or -1] = true, [M.prompt_win or -1] = true }
  local prev = vim.fn.win_getid(vim.fn.winnr("#"))
  if prev ~= 0 and not ours[prev] and vim.bo[vim.api.nvim_win_get_buf(prev)].buftype == "" then
    return prev
  end
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if not ours[win] and vim.bo[vim.api.nvim_win_get_buf(win)].buftype == "" and vim.api.nvim_win_get_config(win).relative == "" then
      return win
    end
  end
end

--- Jump to the code reference (`path:line`) or the tool call's location under the cursor.
function M.jump()
  local view = M.view_of(vim.api.nvim_get_current_buf())
  if not view then
    return
  end
  if require("lsp_agent.links").follow(file_window) then
    return
  end
  local tool = view.tools[vim.api.nvim_win_get_cursor(0)[1]]
  local location = tool and M.tool_location(tool)
  if not location then
    return
  end
  local win = file_window()
  if win then
    vim.api.nvim_set_current_win(win)
  else
    vim.cmd("topleft vsplit")
  end
  vim.cmd.edit(vim.fn.fnameescape(location.path))
  if location.line then
    pcall(vim.api.nvim_win_set_cursor, 0, { location.line + 1, 0 })
  end
end

--- The user message under the cursor of a chat buffer (its `## You` line or its text).
function M.message_at_cursor()
  local view, session_id = M.view_of(vim.api.nvim_get_current_buf())
  if not view or vim.api.nvim_get_current_buf() ~= view.chat_buf then
    return nil
  end
  return (view.users or {})[vim.api.nvim_win_get_cursor(0)[1]], session_id
end

--- Send the prompt area's text.
function M.submit(session_id)
  local view = M.views[session_id]
  if not view or not vim.api.nvim_buf_is_valid(view.prompt_buf) then
    return
  end
  local text = vim.trim(table.concat(vim.api.nvim_buf_get_lines(view.prompt_buf, 0, -1, false), "\n"))
  if text == "" then
    return
  end
  vim.api.nvim_buf_set_lines(view.prompt_buf, 0, -1, false, {})
  M.send(session_id, text)
end

--- The blocks and `context` of a prompt written in the chat: the text, its mentions' blocks,
--- and the focus (unless turned off, or removed for this prompt; a `#selection` mention sends
--- the selection regardless).
function M.prompt_parts(session_id, text)
  local view = M.views[session_id] or {}
  local f = view.focus or focus_mod.from_last(M.last_file_buf)
  local mentions = require("lsp_agent.mentions")
  local parsed = mentions.parse(text, view.symbols, mentions.root(), f and f.uri)
  local context = {}
  if config.options.send_focus and f and not view.focus_off then
    context = focus_mod.context(f)
  elseif parsed.selection and f then
    context = focus_mod.context(f, true)
  end
  local blocks = { { type = "text", text = text } }
  vim.list_extend(blocks, parsed.blocks)
  return blocks, context
end

--- Send `text` to a session, with its mentions and the focus.
function M.send(session_id, text)
  local client = require("lsp_agent.client").get(session_id)
  if not client then
    return log.error("the server is not running")
  end
  local blocks, context = M.prompt_parts(session_id, text)
  require("lsp_agent.actions").send_prompt(client, session_id, blocks, context)
  -- the selection went with this prompt; the file and cursor stay the focus
  local view = M.views[session_id]
  if view and view.focus then
    view.focus.selection, view.focus.selected_text = nil, nil
    M.set_focus(view, view.focus)
  end
end

-- the focus chip --------------------------------------------------------------------------

local FOCUS_NS = vim.api.nvim_create_namespace("lsp_agent_focus")
vim.api.nvim_set_hl(0, "LspAgentFocusChip", { link = "Special", default = true })

--- The chip line shown above the prompt area, or nil.
function M.chip_text(view)
  if not view or not view.focus or not config.options.send_focus then
    return nil
  end
  local chip = focus_mod.chip(view.focus)
  local key = config.options.keymaps.prompt.focus
  if view.focus_off then
    return ("  %s — not sent with this prompt%s"):format(chip, key and (" (" .. key .. " sends it)") or "")
  end
  return ("▸ %s%s"):format(chip, key and ("   " .. key .. " removes it") or "")
end

--- Show the focus chip of a view above its prompt area.
function M.render_focus(view)
  local buf = view.prompt_buf
  if not buf or not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  vim.api.nvim_buf_clear_namespace(buf, FOCUS_NS, 0, -1)
  local text = M.chip_text(view)
  if not text then
    return
  end
  local group = view.focus_off and "Comment" or "LspAgentFocusChip"
  vim.api.nvim_buf_set_extmark(buf, FOCUS_NS, 0, 0, { virt_lines = { { { text, group } } }, virt_lines_above = true })
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    vim.api.nvim_win_call(win, function()
      if vim.fn.line("w0") == 1 then
        vim.fn.winrestview({ topfill = 1 })
      end
    end)
  end
end

--- Make `f` (a focus, or nil) the view's focus, sent with the next prompt.
function M.set_focus(view, f)
  view.focus = f
  view.focus_off = false
  M.render_focus(view)
end

--- Remove the focus from the next prompt, or bring it back.
function M.toggle_focus(session_id)
  local view = M.views[session_id]
  if view and view.focus then
    view.focus_off = not view.focus_off
    M.render_focus(view)
  end
end

--- Entering the prompt area after moving in a file: the focus follows the cursor.
local function refresh_focus(view)
  local last = focus_mod.last
  local f = view.focus
  if last and (not f or f.bufnr ~= last.bufnr or not vim.deep_equal(f.raw_cursor, last.cursor)) then
    M.set_focus(view, focus_mod.from_last())
  end
end

function M.clear_prompt(session_id)
  local view = M.views[session_id]
  if view and view.prompt_buf and vim.api.nvim_buf_is_valid(view.prompt_buf) then
    vim.api.nvim_buf_set_lines(view.prompt_buf, 0, -1, false, {})
  end
end

--- Close the chat and prompt windows.
function M.close()
  for _, win in ipairs({ M.prompt_win, M.win }) do
    if win and vim.api.nvim_win_is_valid(win) then
      if #vim.api.nvim_list_wins() > 1 then
        pcall(vim.api.nvim_win_close, win, true)
      else
        vim.cmd("enew")
      end
    end
  end
  M.win, M.prompt_win = nil, nil
end

local function make_view(session_id)
  local view = M.views[session_id] or { tools = {}, folds = {} }
  M.views[session_id] = view
  local keymaps = config.options.keymaps
  local rebuilt = false
  if not (view.chat_buf and vim.api.nvim_buf_is_valid(view.chat_buf)) then
    rebuilt = view.chat_buf ~= nil
    local buf = vim.api.nvim_create_buf(false, true)
    set_buf_options(buf, "lsp-agent://chat/" .. session_id, "wipe")
    view.fold_count = 0
    vim.bo[buf].modifiable = false
    view.chat_buf = buf
    local k = keymaps.chat
    map(buf, "n", k.close, M.close, "close the chat")
    map(buf, "n", k.stop, function()
      require("lsp_agent.actions").stop(session_id)
    end, "stop the turn")
    map(buf, "n", k.jump, M.jump, "jump to the tool call's location")
    map(buf, "n", k.retry, function()
      require("lsp_agent.actions").retry(session_id)
    end, "send the last prompt again")
    map(buf, "n", k.prompt, function()
      if M.prompt_win and vim.api.nvim_win_is_valid(M.prompt_win) then
        vim.api.nvim_set_current_win(M.prompt_win)
        vim.cmd("startinsert!")
      end
    end, "write a follow-up")
    map(buf, "n", k.follow, function()
      require("lsp_agent.links").follow(file_window)
    end, "open the code reference under the cursor")
  end
  if not (view.prompt_buf and vim.api.nvim_buf_is_valid(view.prompt_buf)) then
    local buf = vim.api.nvim_create_buf(false, true)
    set_buf_options(buf, "lsp-agent://prompt/" .. session_id, "hide")
    view.prompt_buf = buf
    local k = keymaps.prompt
    map(buf, "n", k.submit, function()
      M.submit(session_id)
    end, "send the prompt")
    map(buf, "i", k.submit_insert, function()
      vim.cmd("stopinsert")
      M.submit(session_id)
    end, "send the prompt")
    map(buf, "n", k.stop, function()
      require("lsp_agent.actions").stop(session_id)
    end, "stop the turn")
    map(buf, "n", k.close, M.close, "close the chat")
    map(buf, { "n", "i" }, k.focus, function()
      M.toggle_focus(session_id)
    end, "remove the focus from the prompt (or bring it back)")
    view.symbols = view.symbols or {}
    require("lsp_agent.mentions").attach(buf, view.symbols)
    vim.api.nvim_create_autocmd("BufEnter", {
      buffer = buf,
      callback = function()
        refresh_focus(view)
      end,
    })
  end
  return view, rebuilt
end

local function size(value, total)
  if value < 1 then
    return math.max(1, math.floor(total * value))
  end
  return math.floor(value)
end

local function set_chat_win_options(win)
  local wo = vim.wo[win]
  wo.wrap = true
  wo.linebreak = true
  wo.number = false
  wo.relativenumber = false
  wo.signcolumn = "no"
  wo.foldmethod = "expr"
  wo.foldexpr = "v:lua.require'lsp_agent.chat'.foldexpr()"
  wo.foldlevel = 0
  wo.foldenable = true
  local layout = config.options.window.layout
  wo.winfixwidth = layout == "vertical"
  wo.winfixheight = layout == "horizontal"
  wo.winbar = "%{%v:lua.require'lsp_agent.chat'.winbar()%}"
  wo.statusline = "%{%v:lua.require'lsp_agent.chat'.gauge()%}"
end

--- Create the chat and prompt windows (or reuse them) for a view.
local function show(view)
  local w = config.options.window
  local prompt_height = math.floor(w.prompt_height)
  if M.win and vim.api.nvim_win_is_valid(M.win) then
    vim.api.nvim_win_set_buf(M.win, view.chat_buf)
  else
    if w.layout == "float" then
      local width = size(w.float.width, vim.o.columns)
      local height = math.max(3, size(w.float.height, vim.o.lines) - prompt_height - 2)
      local row = math.floor((vim.o.lines - height - prompt_height - 2) / 2)
      local col = math.floor((vim.o.columns - width) / 2)
      M.win = vim.api.nvim_open_win(view.chat_buf, true, {
        relative = "editor",
        width = width,
        height = height,
        row = row,
        col = col,
        border = w.float.border,
      })
      M.prompt_win = vim.api.nvim_open_win(view.prompt_buf, false, {
        relative = "editor",
        width = width,
        height = prompt_height,
        row = row + height + 2,
        col = col,
        border = w.float.border,
      })
    else
      if w.layout == "tab" then
        vim.cmd("tabnew")
      elseif w.layout == "horizontal" then
        vim.cmd((w.position == "top" and "topleft" or "botright") .. " split")
        vim.api.nvim_win_set_height(0, size(w.size, vim.o.lines))
      else
        vim.cmd((w.position == "left" and "topleft" or "botright") .. " vsplit")
        vim.api.nvim_win_set_width(0, size(w.size, vim.o.columns))
      end
      local placeholder = vim.api.nvim_get_current_buf()
      M.win = vim.api.nvim_get_current_win()
      vim.api.nvim_win_set_buf(M.win, view.chat_buf)
      if placeholder ~= view.chat_buf and vim.api.nvim_buf_is_valid(placeholder) and vim.api.nvim_buf_get_name(placeholder) == "" and not vim.bo[placeholder].modified and #vim.fn.win_findbuf(placeholder) == 0 then
        pcall(vim.api.nvim_buf_delete, placeholder, {})
      end
    end
    set_chat_win_options(M.win)
    local chat_win = M.win
    vim.api.nvim_create_autocmd("WinClosed", {
      pattern = tostring(chat_win),
      once = true,
      callback = function()
        vim.schedule(function()
          if M.prompt_win and vim.api.nvim_win_is_valid(M.prompt_win) and #vim.api.nvim_list_wins() > 1 then
            pcall(vim.api.nvim_win_close, M.prompt_win, true)
          end
          if M.win == chat_win then
            M.win, M.prompt_win = nil, nil
          end
        end)
      end,
    })
  end
  set_chat_win_options(M.win)
  if M.prompt_win and vim.api.nvim_win_is_valid(M.prompt_win) then
    vim.api.nvim_win_set_buf(M.prompt_win, view.prompt_buf)
  else
    vim.api.nvim_set_current_win(M.win)
    vim.cmd("belowright split")
    M.prompt_win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(M.prompt_win, view.prompt_buf)
    vim.api.nvim_win_set_height(M.prompt_win, prompt_height)
  end
  vim.wo[M.prompt_win].winfixheight = true
  vim.wo[M.prompt_win].winbar = "%{%v:lua.require'lsp_agent.chat'.prompt_winbar()%}"
  vim.wo[M.prompt_win].number = false
  vim.wo[M.prompt_win].relativenumber = false
  vim.wo[M.prompt_win].signcolumn = "no"
end

--- Open the chat of `session_id` (the current session, or a new one, when nil).
--- opts: { focus_prompt = true, insert = false, prompt_text = nil, new = false,
---         range = {line1, line2} (the selection sent as focus), focus = a captured focus
---         or false, on_open = fun(session_id, view) }
function M.open(session_id, opts)
  opts = opts or {}
  -- the focus is where the user was when asking for the chat
  local captured = opts.focus
  if captured == nil then
    captured = focus_mod.capture(vim.api.nvim_get_current_win(), opts.range)
  end
  if not session_id then
    local later = vim.tbl_extend("force", opts, { focus = captured or false })
    return require("lsp_agent.actions").with_session(opts.new, function(_, id)
      M.open(id, later)
    end)
  end
  local s = session.get(session_id)
  session.current = session_id
  local view, rebuilt = make_view(session_id)
  if captured then
    M.set_focus(view, captured)
  elseif not view.focus then
    M.set_focus(view, focus_mod.from_last(M.last_file_buf))
  end
  show(view)
  if rebuilt and not s.loading then
    -- reopened after closing: rebuild it from the server's log
    local client = require("lsp_agent.client").get(session_id)
    if client then
      require("lsp_agent.handlers").load(client, session_id, 1)
    end
  end
  M.render(s)
  if opts.prompt_text then
    vim.api.nvim_buf_set_lines(view.prompt_buf, 0, -1, false, split(opts.prompt_text))
  end
  M.render_focus(view)
  if opts.focus_prompt ~= false then
    vim.api.nvim_set_current_win(M.prompt_win)
    if opts.insert then
      vim.cmd("startinsert!")
    elseif opts.insert == false then
      vim.cmd("stopinsert")
    end
  end
  if opts.on_open then
    opts.on_open(session_id, view)
  end
  return view
end

function M.setup()
  local group = vim.api.nvim_create_augroup("lsp_agent_chat", { clear = true })
  vim.api.nvim_create_autocmd("BufEnter", {
    group = group,
    callback = function(args)
      if util.is_file_buffer(args.buf) then
        M.last_file_buf = args.buf
      end
    end,
  })
end

return M
