--- `agent/session/requestPermission` (protocol.md §4): `vim.ui.select` with the server's
--- options (once / session / always / deny), "Deny with reason…" (then `vim.ui.input`) and,
--- for an edit, "View diff".
---
--- Each ask waits in a queue until it is answered, so nothing the user does by accident loses
--- it: dismissing the prompt (<Esc>, no choice) leaves it pending (`:LspAgent permission`
--- shows it again), and "View diff" shows the diff and brings the prompt back only once the
--- diff tab is closed. One prompt is on screen at a time. An ask the server gave up on (the
--- turn was stopped) is dropped.
local config = require("lsp_agent.config")
local diff = require("lsp_agent.diff")
local log = require("lsp_agent.log")
local session = require("lsp_agent.session")
local ui = require("lsp_agent.ui")
local util = require("lsp_agent.util")

local M = {}

M.VIEW_DIFF = "View diff"
M.DENY_WITH_REASON = "Deny with reason…"
M.HINT = ":LspAgent permission"

--- The asks not answered yet, oldest first: { params, session, choices, prompt,
--- client_id, state = "queued"|"prompt"|"diff"|"parked", tabs, resume }.
M.queue = {}

local function cancelled()
  return { outcome = { outcome = "cancelled" } }
end

local function selected(option_id, reason)
  local outcome = { outcome = "selected", optionId = option_id }
  if reason and reason ~= "" then
    outcome.reason = reason
  end
  return { outcome = outcome }
end

--- A one-line description of what is asked.
function M.describe(params)
  local subject = util.nn(params.subject)
  local detail = ""
  if subject and subject.type == "command" then
    detail = "$ " .. tostring(subject.command)
    if params.title and params.title:find(tostring(subject.command), 1, true) then
      -- the title says the command already: the model's description of it (if any) is the
      -- detail, the command is not said twice
      local description = util.nn(params.description)
      detail = type(description) == "string" and description or ""
    end
  elseif subject and subject.type == "edit" then
    local files = {}
    for _, file in ipairs(subject.files or {}) do
      table.insert(files, ("%s (+%d -%d)"):format(util.display_path(file.uri), file.additions or 0, file.deletions or 0))
    end
    detail = table.concat(files, ", ")
  elseif subject and subject.type == "fetch" then
    detail = tostring(subject.url)
  elseif params.patterns and #params.patterns > 0 then
    detail = table.concat(params.patterns, ", ")
  end
  local text = ("lsp-agent: %s"):format(params.title or params.permission)
  if detail ~= "" and detail ~= params.title then
    text = text .. " — " .. detail
  end
  return text
end

--- The choices shown, in order: `{label, option?, action?}`.
function M.choices(params)
  local choices = {}
  local reject
  -- what "session"/"always" save: the server names it in the option (protocol.md §4); an
  -- older server only sent `patterns`
  local saves = table.concat(params.always or params.patterns or {}, ", ")
  for _, option in ipairs(params.options or {}) do
    local label = option.name or option.optionId
    local saving = option.kind == "allow_session" or option.kind == "allow_always"
    if saving and saves ~= "" and not label:find(saves, 1, true) then
      label = ("%s (%s)"):format(label, saves)
    end
    table.insert(choices, { label = label, option = option })
    if option.kind == "reject_once" and not reject then
      reject = option
    end
  end
  if reject then
    table.insert(choices, { label = M.DENY_WITH_REASON, option = reject, action = "reason" })
  end
  local subject = util.nn(params.subject)
  if subject and subject.type == "edit" and #(subject.files or {}) > 0 then
    table.insert(choices, { label = M.VIEW_DIFF, action = "diff" })
  end
  return choices
end

-- the queue ---------------------------------------------------------------------------------

--- The first pending ask of a session.
function M.pending_of(session_id)
  for _, ask in ipairs(M.queue) do
    if ask.session.id == session_id then
      return ask
    end
  end
end

local function refresh(s)
  local ask = M.pending_of(s.id)
  s.pending_permission = ask and ask.params or nil
  session.changed(s)
end

local show, next_ask

local function diff_uris(params)
  local uris = {}
  for _, file in ipairs(params.subject.files or {}) do
    table.insert(uris, file.uri)
  end
  return uris
end

--- The option of an answer, by id.
local function option_of(ask, option_id)
  for _, option in ipairs(ask.params.options or {}) do
    if option.optionId == option_id then
      return option
    end
  end
end

--- An allow of an edit carries the proposals the user edited in the diff tab (only the
--- files of that ask).
local function with_user_edits(ask, result)
  local subject = util.nn(ask.params.subject)
  local outcome = result.outcome
  local option = outcome and outcome.optionId and option_of(ask, outcome.optionId)
  if not subject or subject.type ~= "edit" or not option or not vim.startswith(option.kind or "", "allow") then
    return result
  end
  local edited = diff.edited(subject.changeSetId)
  local content = {}
  for _, uri in ipairs(diff_uris(ask.params)) do
    content[uri] = edited[uri]
  end
  if next(content) then
    outcome.modifiedContent = content
    log.info("allowed with your edits of %s", table.concat(vim.tbl_map(util.display_path, vim.tbl_keys(content)), ", "))
  end
  return result
end

--- Answer an ask: out of the queue, its diff tabs closed, the server's request answered.
local function finish(ask, result)
  if ask.done then
    return
  end
  result = with_user_edits(ask, result)
  ask.done = true
  for i, queued in ipairs(M.queue) do
    if queued == ask then
      table.remove(M.queue, i)
      break
    end
  end
  if config.options.diff_close_on_answer then
    diff.close(ask.tabs)
  end
  local subject = util.nn(ask.params.subject)
  if subject and subject.changeSetId then
    diff.forget(subject.changeSetId)
  end
  refresh(ask.session)
  log.info("permission %q answered: %s", ask.params.title or "", vim.inspect(result.outcome))
  ask.resume(result)
  vim.schedule(next_ask)
end
M.finish = finish

--- Whether any of the ask's diff tabs is still open.
local function diff_open(ask)
  for _, tab in ipairs(ask.tabs or {}) do
    if vim.api.nvim_tabpage_is_valid(tab) then
      return true
    end
  end
  return false
end

--- Show the ask's diff; the prompt comes back when its tabs are closed (`tabs_closed`).
local function view_diff(ask)
  ask.state = "diff"
  for _, tab in ipairs(ask.tabs) do
    if vim.api.nvim_tabpage_is_valid(tab) then
      return vim.api.nvim_set_current_tabpage(tab) -- still open: back to it
    end
  end
  ask.tabs = {}
  local client = vim.lsp.get_client_by_id(ask.client_id)
  if not client then
    ask.state = "queued"
    return show(ask)
  end
  diff.open(client, ask.params.sessionId, ask.params.subject.changeSetId, diff_uris(ask.params), function(tabs)
    if ask.done then
      return diff.close(tabs)
    end
    vim.list_extend(ask.tabs, tabs)
    if #tabs == 0 then
      log.warn("could not show the diff")
      return show(ask)
    end
  end, { hint = { "back to the permission prompt (:LspAgent allow applies your edits)", "back to the permission prompt" }, editable = true })
end

--- Show the ask's prompt (one `vim.ui.select`, answered now or later; only the answer of
--- the latest prompt of an ask counts).
function show(ask)
  if ask.done or ask.state == "prompt" then
    return
  end
  ask.state = "prompt"
  ask.shown = (ask.shown or 0) + 1
  local shown = ask.shown
  vim.ui.select(ask.choices, {
    prompt = ask.prompt,
    kind = "lsp_agent_permission",
    format_item = function(item)
      return item.label
    end,
  }, function(choice)
    if ask.done or shown ~= ask.shown then
      return
    end
    if not choice then
      ask.state = "parked"
      log.notify("the permission is still pending: %s answers it", M.HINT)
      return vim.schedule(next_ask)
    end
    if choice.action == "diff" then
      return vim.schedule(function()
        view_diff(ask)
      end)
    end
    if choice.action == "reason" then
      return vim.schedule(function()
        vim.ui.input({ prompt = "Reason for denying (the agent reads it): " }, function(reason)
          if reason == nil then
            ask.state = "queued"
            return vim.schedule(function()
              show(ask)
            end)
          end
          finish(ask, selected(choice.option.optionId, reason))
        end)
      end)
    end
    finish(ask, selected(choice.option.optionId))
  end)
end

--- Show the oldest ask that waits for its prompt, unless a prompt or a diff is on screen.
function next_ask()
  for _, ask in ipairs(M.queue) do
    if ask.state == "prompt" or ask.state == "diff" then
      return
    end
  end
  for _, ask in ipairs(M.queue) do
    if ask.state == "queued" then
      return show(ask)
    end
  end
end

--- `:LspAgent permission`: the prompt of the current session's pending ask (or the oldest
--- one) again, even while its diff is open, or when a picker never answered.
function M.answer()
  local ask = session.current and M.pending_of(session.current) or M.queue[1]
  if not ask then
    return log.notify("no permission to answer")
  end
  ask.state = "queued"
  -- after the command returns: a prompt that waits for keys must not hold up its caller
  vim.schedule(function()
    show(ask)
  end)
end

--- `:LspAgent allow [once|session|always]`: answer the current session's pending ask (or the
--- oldest one) with that allow, from anywhere, e.g. the diff tab after editing the proposal.
function M.allow(kind)
  kind = (kind == nil or kind == "") and "once" or kind
  local ask = session.current and M.pending_of(session.current) or M.queue[1]
  if not ask then
    return log.notify("no permission to answer")
  end
  for _, option in ipairs(ask.params.options or {}) do
    if option.kind == "allow_" .. kind then
      return finish(ask, selected(option.optionId))
    end
  end
  log.warn("this ask offers no allow %s", kind)
end

--- `:LspAgent diff` of the pending ask's change set: the same as its "View diff".
function M.view_pending_diff(session_id, change_set_id)
  local ask = M.pending_of(session_id)
  local subject = ask and util.nn(ask.params.subject)
  if not ask or ask.state == "prompt" or not subject or subject.changeSetId ~= change_set_id then
    return false
  end
  view_diff(ask)
  return true
end

local function tabs_closed()
  for _, ask in ipairs(M.queue) do
    if ask.state == "diff" and #ask.tabs > 0 and not diff_open(ask) then
      ask.tabs = {}
      ask.state = "queued"
      show(ask)
      return
    end
  end
end

--- The server gave up on the ask (the turn stopped): answer it, nothing is shown any more.
--- "Idle" counts only once the session was seen busy with the ask (the plugin's view of a
--- session may lag behind the request).
local function drop_stale(s)
  if s.loading then
    return
  end
  for _, ask in ipairs(vim.list_slice(M.queue)) do
    if ask.session == s then
      local tool = s.tools[ask.params.toolCallId]
      ask.seen_busy = ask.seen_busy or s.state ~= "idle"
      if (s.state == "idle" and ask.seen_busy) or (tool and tool.permission == "cancelled") then
        log.info("permission %q withdrawn by the server", ask.params.title or "")
        finish(ask, cancelled())
      end
    end
  end
end

session.on_change(drop_stale)
vim.api.nvim_create_autocmd("TabClosed", {
  group = vim.api.nvim_create_augroup("lsp_agent_permission", { clear = true }),
  callback = function()
    vim.schedule(tabs_closed)
  end,
})

--- The handler (runs in the RPC coroutine): waits until the ask is answered.
function M.ask(params, ctx)
  if type(params) ~= "table" or type(params.options) ~= "table" then
    return cancelled()
  end
  if not ui.can_wait() then
    log.warn("cannot show a permission prompt here; answering cancelled")
    return cancelled()
  end
  local s = session.get(params.sessionId, ctx.client_id)
  local subject = util.nn(params.subject)
  if subject and subject.type == "edit" then
    s.last_change_set = { changeSetId = subject.changeSetId, uris = diff_uris(params) }
  end
  local ask = {
    params = params,
    session = s,
    client_id = ctx.client_id,
    choices = M.choices(params),
    prompt = M.describe(params),
    state = "queued",
    tabs = {},
    seen_busy = s.state ~= "idle",
  }
  return ui.await(function(resume)
    ask.resume = resume
    table.insert(M.queue, ask)
    refresh(s)
    next_ask()
  end)
end

return M
