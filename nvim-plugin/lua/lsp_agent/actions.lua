--- Everything that starts or steers a turn: prompts, ask/fix/explain (through the server's
--- `lspAgent.*` commands when it offers them), stop, undo/redo, sessions, mode and model.
local client_mod = require("lsp_agent.client")
local config = require("lsp_agent.config")
local log = require("lsp_agent.log")
local protocol = require("lsp_agent.protocol")
local session = require("lsp_agent.session")
local util = require("lsp_agent.util")

local M = {}

local function chat()
  return require("lsp_agent.chat")
end

--- Start a session on `client`; `cb(session_id|nil)`.
function M.new_session(client, cb)
  local params = { workspaceFolder = client_mod.folder_uri(client) }
  if M.default_mode then
    params.mode = M.default_mode
  end
  if M.default_model then
    params.model = M.default_model
  end
  client_mod.request(client, protocol.requests.session_new, params, function(err, result)
    if err or not result then
      return cb(nil)
    end
    local s = session.get(result.sessionId, client.id)
    s.config_options = result.configOptions or {}
    session.current = result.sessionId
    session.changed(s)
    cb(result.sessionId)
  end)
end

--- The current session (or a new one when `new` or none); `cb(client, session_id)`.
function M.with_session(new, cb)
  local current = not new and session.current or nil
  client_mod.with_client(function(client)
    if not client then
      return
    end
    if current and session.sessions[current] then
      return cb(client, current)
    end
    M.new_session(client, function(session_id)
      if session_id then
        cb(client, session_id)
      end
    end)
  end, current)
end

--- Send a prompt (ContentBlock[] or a string) to a session, with optional editor context.
--- `extra`: more of `agent/prompt`'s params (e.g. `until`: protocol.md "Until green").
function M.send_prompt(client, session_id, prompt, context, cb, extra)
  if type(prompt) == "string" then
    prompt = { { type = "text", text = prompt } }
  end
  local params = {
    sessionId = session_id,
    prompt = prompt,
    clientMessageId = util.next_id("nvim"),
  }
  if context and next(context) ~= nil then
    params.context = context
  end
  for key, value in pairs(extra or {}) do
    params[key] = value
  end
  session.current = session_id
  client_mod.request(client, protocol.requests.prompt, params, function(err, result)
    if not err and result then
      log.info("prompt admitted as %s%s", result.userMessageId, result.queued and " (queued)" or "")
    end
    if cb then
      cb(err, result)
    end
  end)
end

--- The editor context of a buffer: active document, cursor, selection (with its text, when
--- the focus is sent), diagnostics.
local function editor_context(bufnr, range, diagnostics)
  local context = {}
  if util.is_file_buffer(bufnr) and config.options.send_focus then
    context.activeDocument = { uri = vim.uri_from_bufnr(bufnr) }
    if vim.api.nvim_get_current_buf() == bufnr then
      context.cursor = require("lsp_agent.focus").capture(0).cursor
    end
  end
  if range then
    context.selection = range
    if config.options.send_focus then
      local lines = vim.api.nvim_buf_get_lines(bufnr, range.start.line, range["end"].line + 1, false)
      context.selectedText = vim.fn.strcharpart(table.concat(lines, "\n"), 0, require("lsp_agent.focus").MAX_TEXT)
    end
  end
  if diagnostics and #diagnostics > 0 then
    context.diagnostics = diagnostics
  end
  return context
end

--- The LSP range of lines `line1`..`line2` (1-based, inclusive) of `bufnr`.
function M.line_range(bufnr, line1, line2)
  return {
    start = { line = line1 - 1, character = 0 },
    ["end"] = { line = line2 - 1, character = util.utf16_len(bufnr, line2 - 1) },
  }
end

--- The diagnostics under the cursor (those on its line when none covers its column).
function M.diagnostics_at_cursor(bufnr, win)
  local pos = vim.api.nvim_win_get_cursor(win or 0)
  local lnum, col = pos[1] - 1, pos[2]
  local on_line = vim.diagnostic.get(bufnr, { lnum = lnum })
  local under = {}
  for _, d in ipairs(on_line) do
    local end_lnum = d.end_lnum or d.lnum
    local end_col = d.end_col or d.col
    local after_start = lnum > d.lnum or col >= d.col
    local before_end = lnum < end_lnum or col <= end_col
    if after_start and before_end then
      table.insert(under, d)
    end
  end
  return #under > 0 and under or on_line
end

--- Run a `lspAgent.*` command on the server; `cb(result)`.
function M.execute(client, command, argument, cb)
  client_mod.request(client, "workspace/executeCommand", {
    command = command,
    arguments = { argument },
  }, function(err, result)
    if err then
      return
    end
    if cb then
      cb(result)
    end
  end)
end

--- After a command started a turn: follow its session in the chat.
local function follow(client, result)
  if type(result) == "table" and type(result.sessionId) == "string" then
    local s = session.get(result.sessionId, client.id)
    session.current = s.id
    chat().open(s.id, { focus_prompt = false })
  end
end

--- A turn about a place in a buffer: `kind` is "ask", "fix" or "explain".
--- opts: {bufnr, range (LSP), diagnostics (LSP), prompt, new (a new session)}
function M.about(kind, opts)
  local bufnr = opts.bufnr or vim.api.nvim_get_current_buf()
  local uri = util.is_file_buffer(bufnr) and vim.uri_from_bufnr(bufnr) or nil
  local range = opts.range
  local diagnostics = opts.diagnostics
  local use_current = kind == "ask" and not opts.new
  client_mod.with_client(function(client)
    if not client then
      return
    end
    local session_id = use_current and session.current and session.sessions[session.current] and session.current or nil
    local command = protocol.commands[kind]
    if uri and range and client_mod.has_command(client, command) then
      local argument = { uri = uri, range = range }
      if diagnostics and #diagnostics > 0 then
        argument.diagnostics = diagnostics
      end
      if session_id then
        argument.sessionId = session_id
      end
      if opts.prompt and opts.prompt ~= "" then
        argument.prompt = opts.prompt
      end
      log.info("%s through %s", kind, command)
      return M.execute(client, command, argument, function(result)
        follow(client, result)
      end)
    end
    -- A server without the command: the same as a prompt with the editor context.
    local text = opts.prompt
    if not text or text == "" then
      if kind == "fix" then
        local messages = {}
        for _, d in ipairs(diagnostics or {}) do
          table.insert(messages, d.message)
        end
        text = "Fix this problem: " .. table.concat(messages, "; ")
      elseif kind == "explain" then
        text = "Explain this code."
      else
        return
      end
    end
    local prompt = { { type = "text", text = text } }
    if uri then
      local link = { type = "resource_link", uri = uri }
      if range then
        link.range = range
      end
      table.insert(prompt, link)
    end
    local context = editor_context(bufnr, range, diagnostics)
    log.info("%s as a prompt (the server has no %s)", kind, command)
    local function go(sid)
      chat().open(sid, { focus_prompt = false })
      M.send_prompt(client, sid, prompt, context)
    end
    if session_id then
      go(session_id)
    else
      M.new_session(client, function(sid)
        if sid then
          go(sid)
        end
      end)
    end
  end, use_current and session.current or nil)
end

--- Commands of code actions (`vim.lsp.ClientConfig.commands`): run on the server, then
--- follow the session in the chat. "Ask agent about selection…" asks for the question first.
function M.client_commands()
  local commands = {}
  for kind, name in pairs(protocol.commands) do
    if kind == "fix" or kind == "ask" or kind == "explain" then
      commands[name] = function(command, ctx)
        local client = vim.lsp.get_client_by_id(ctx.client_id)
        if not client then
          return
        end
        local argument = vim.deepcopy((command.arguments or {})[1] or {})
        local function run()
          M.execute(client, name, argument, function(result)
            follow(client, result)
          end)
        end
        if kind == "ask" and not argument.prompt then
          vim.ui.input({ prompt = "Ask the agent: " }, function(text)
            if text and text ~= "" then
              argument.prompt = text
              run()
            end
          end)
        else
          run()
        end
      end
    end
  end
  return commands
end

--- Stop the current session's turn.
--- The session to act on (the current one by default) and its running client, or nothing
--- after saying why; with `command`, also that the server offers it.
local function session_client(session_id, verb, command)
  session_id = session_id or session.current
  if not session_id then
    return log.warn("no session to %s", verb)
  end
  local client = client_mod.get(session_id)
  if not client then
    return log.warn("the server is not running")
  end
  if command and not client_mod.has_command(client, command) then
    return log.error("this server cannot %s (it does not offer %s)", verb, command)
  end
  return session_id, client
end

function M.stop(session_id)
  local client
  session_id, client = session_client(session_id, "stop")
  if not client then
    return
  end
  client:notify(protocol.notifications.cancel, { sessionId = session_id })
  log.info("cancel sent for %s", session_id)
end

--- Send a session's last prompt again (its text and mentions; the editor context as it is
--- now): what Retry does after a turn failed (a refused key, a provider error).
function M.retry(session_id)
  local client
  session_id, client = session_client(session_id, "retry")
  if not client then
    return
  end
  local s = session.get(session_id)
  if s.state ~= "idle" then
    return log.warn("the turn is still running: stop it first")
  end
  local last
  for _, item in ipairs(s.items) do
    if item.kind == "user" then
      last = item
    end
  end
  if not last or not last.blocks or #last.blocks == 0 then
    return log.warn("no prompt to send again")
  end
  M.send_prompt(client, session_id, vim.deepcopy(last.blocks))
  log.info("sent the last prompt of %s again", session_id)
end

--- Compact the current session's conversation now (`agent/session/compact`): a summary
--- replaces the older messages, freeing the context window.
function M.compact(session_id)
  local client
  session_id, client = session_client(session_id, "compact")
  if not client then
    return
  end
  client_mod.request(client, protocol.requests.session_compact, { sessionId = session_id }, function(err)
    if err then
      return log.warn("compact: %s", client_mod.describe_error(err))
    end
    log.info("compacted %s", session_id)
  end, true)
end

--- Undo the last prompt of the current session (files and messages); the prompt is offered
--- again in the prompt area. `lspAgent.undo`.
function M.undo(session_id)
  local client
  session_id, client = session_client(session_id, "undo", protocol.commands.undo)
  if not client then
    return
  end
  M.execute(client, protocol.commands.undo, { sessionId = session_id }, function(result)
    vim.cmd("silent! checktime")
    if type(result) == "table" and result.prompt then
      local text = util.prompt_text(result.prompt)
      chat().open(session_id, { focus_prompt = true, prompt_text = text })
    end
    log.notify("undone; :LspAgent redo brings it back")
  end)
end

--- Redo what the last undo took back. `lspAgent.redo`.
function M.redo(session_id)
  local client
  session_id, client = session_client(session_id, "redo", protocol.commands.redo)
  if not client then
    return
  end
  M.execute(client, protocol.commands.redo, { sessionId = session_id }, function()
    vim.cmd("silent! checktime")
    chat().clear_prompt(session_id)
    log.notify("redone")
  end)
end

--- The user message a rewind goes back to before: the one under the cursor in the chat, else
--- the session's last prompt not hidden already (a conversation rewind hides it, so each one
--- goes one prompt further back).
local function rewind_target(s)
  local at_cursor, cursor_session = chat().message_at_cursor()
  if at_cursor and cursor_session == s.id then
    return at_cursor
  end
  local hidden = s.revert and s.revert.scope ~= "code" and s.revert.message_id
  local target
  for _, item in ipairs(s.items) do
    if item.kind == "user" then
      if item.message_id == hidden then
        break
      end
      target = item.message_id
    end
  end
  return target
end

local REWIND_DONE = {
  both = "rewound the files and the conversation",
  code = "rewound the files (the conversation stays)",
  conversation = "rewound the conversation (the files stay)",
}

--- Rewind the current session to before a prompt (`agent/revert/stage` with `scope`); with
--- the conversation rewound, the prompt's text is offered again in the prompt area.
function M.rewind(scope, session_id)
  if scope == nil or scope == "" then
    return vim.ui.select(protocol.revert_scopes, {
      prompt = "Rewind what?",
      kind = "lsp_agent_rewind",
      format_item = function(item)
        return ({ both = "code and conversation", code = "code only", conversation = "conversation only" })[item]
      end,
    }, function(choice)
      if choice then
        M.rewind(choice, session_id)
      end
    end)
  end
  if not vim.list_contains(protocol.revert_scopes, scope) then
    return log.warn("rewind takes %s, not %q", table.concat(protocol.revert_scopes, ", "), scope)
  end
  local _, cursor_session = chat().message_at_cursor()
  local client
  session_id, client = session_client(session_id or cursor_session, "rewind")
  if not client then
    return
  end
  local s = session.get(session_id)
  local message_id = rewind_target(s)
  if not message_id then
    return log.warn("nothing to rewind")
  end
  local text
  for _, item in ipairs(s.items) do
    if item.kind == "user" and item.message_id == message_id then
      text = item.text
    end
  end
  client_mod.request(client, protocol.requests.revert_stage, {
    sessionId = session_id,
    messageId = message_id,
    scope = scope,
  }, function(err, result)
    if err then
      return
    end
    vim.cmd("silent! checktime")
    for _, uri in ipairs(result and result.conflicts or {}) do
      log.warn("left as it is (changed since): %s", util.display_path(uri))
    end
    if scope ~= "code" and text and text ~= "" then
      chat().open(session_id, { focus_prompt = true, prompt_text = text })
    end
    log.notify("%s; :LspAgent redo brings it back", REWIND_DONE[scope])
  end)
end

--- Open a session in the chat, rebuilt from `agent/session/load` (replay "full").
function M.resume(session_id)
  client_mod.with_client(function(client)
    if not client then
      return
    end
    local function open(id)
      session.current = id
      session.get(id, client.id)
      require("lsp_agent.handlers").load(client, id, 1)
      chat().open(id, { focus_prompt = true })
    end
    if session_id and session_id ~= "" then
      return open(session_id)
    end
    M.list(client, function(sessions)
      if sessions[1] then
        open(sessions[1].sessionId)
      else
        log.warn("no session to resume in this workspace")
      end
    end)
  end)
end

M.known_sessions = {}

--- This workspace's sessions, most recent first; `cb(sessions)`.
function M.list(client, cb)
  client_mod.request(client, protocol.requests.session_list, { workspaceFolder = client_mod.folder_uri(client), limit = 100 }, function(err, result)
    local sessions = (not err and result and result.sessions) or {}
    M.known_sessions = sessions
    cb(sessions)
  end)
end

--- Pick a session with `vim.ui.select` and open it.
function M.sessions()
  client_mod.with_client(function(client)
    if not client then
      return
    end
    M.list(client, function(sessions)
      if #sessions == 0 then
        return log.notify("no sessions in this workspace yet")
      end
      vim.ui.select(sessions, {
        prompt = "lsp-agent sessions",
        kind = "lsp_agent_session",
        format_item = function(item)
          local title = item.title ~= "" and item.title or "(untitled)"
          return ("%s  [%s]  %s  %s"):format(title, item.state, item.updatedAt or "", item.sessionId)
        end,
      }, function(choice)
        if choice then
          M.resume(choice.sessionId)
        end
      end)
    end)
  end)
end

local SEARCH_KINDS = {
  user = "you said",
  assistant = "agent said",
  reasoning = "agent thought",
  tool_input = "tool input",
  tool_output = "tool output",
}

--- One search hit as one printable line: title, what matched, the snippet, when that message
--- was written (the hit's own time, not the session's).
function M.search_label(hit)
  local title = hit.title ~= "" and hit.title or "(untitled)"
  local snippet = vim.trim((hit.snippet or ""):gsub("%s+", " "))
  local when = (hit.time or ""):gsub("T", " "):sub(1, 16)
  local line = ("%s  [%s]  %s  %s  %s"):format(title, SEARCH_KINDS[hit.kind] or hit.kind, snippet, when, hit.sessionId)
  return vim.fn.strtrans(line)
end

--- Find past sessions by what was said or done in them (`agent/session/search`), pick one with
--- `vim.ui.select` and open it. `opts.all`: every workspace, not only this one.
function M.search(query, opts)
  opts = opts or {}
  if not query or vim.trim(query) == "" then
    return log.warn("search for what? :LspAgent sessions search [--all] TEXT")
  end
  client_mod.with_client(function(client)
    if not client then
      return
    end
    local params = { query = query, limit = 50 }
    if not opts.all then
      params.workspaceFolder = client_mod.folder_uri(client)
    end
    client_mod.request(client, protocol.requests.session_search, params, function(err, result)
      if err then
        return log.warn("search: %s", client_mod.describe_error(err))
      end
      local hits = (result and result.hits) or {}
      if #hits == 0 then
        local where = opts.all and "" or " in this workspace (--all: every one)"
        return log.notify("no session mentions %s%s", query, where)
      end
      vim.ui.select(hits, {
        prompt = ("sessions mentioning %s"):format(query),
        kind = "lsp_agent_search",
        format_item = M.search_label,
      }, function(choice)
        if choice then
          M.resume(choice.sessionId)
        end
      end)
    end, true)
  end)
end

--- Set the session's mode or model (`config_id`); without `value`, pick one.
function M.set_option(config_id, value)
  local session_id = session.current
  local s = session_id and session.sessions[session_id]
  if not s then
    if value and value ~= "" then
      M["default_" .. config_id] = value
      return log.notify("%s for new sessions: %s", config_id, value)
    end
    return log.warn("no session yet: give a value to use for new sessions")
  end
  local client = client_mod.get(session_id)
  if not client then
    return log.warn("the server is not running")
  end
  local function apply(chosen)
    client_mod.request(client, protocol.requests.set_config_option, {
      sessionId = session_id,
      configId = config_id,
      value = chosen,
    }, function(err, result)
      if not err and result then
        s.config_options = result.configOptions or s.config_options
        session.changed(s)
        log.notify("%s: %s", config_id, chosen)
      end
    end)
  end
  if value and value ~= "" then
    return apply(value)
  end
  local current, option = s:config_value(config_id)
  if not option then
    return log.warn("the server offers no %s choice", config_id)
  end
  vim.ui.select(option.options, {
    prompt = ("%s (now %s)"):format(option.name, current),
    format_item = function(item)
      return item.name .. (item.description and (" — " .. item.description) or "")
    end,
  }, function(choice)
    if choice then
      apply(choice.value)
    end
  end)
end

--- The diff of the pending (or last) edit of the current session.
function M.diff()
  local s = session.current and session.sessions[session.current]
  local change_set = s and s.last_change_set
  if not change_set then
    return log.warn("no proposed edit to show")
  end
  local client = client_mod.get(s.id)
  if not client then
    return log.warn("the server is not running")
  end
  -- the diff of a pending ask: closing it brings its permission prompt back
  if require("lsp_agent.permission").view_pending_diff(s.id, change_set.changeSetId) then
    return
  end
  require("lsp_agent.diff").open(client, s.id, change_set.changeSetId, change_set.uris)
end

return M
