--- What the plugin knows about each session: built only from `agent/session/update`
--- notifications (protocol.md §3), so it can always be rebuilt with `agent/session/load`.
local util = require("lsp_agent.util")

local M = {}

--- Every session seen, by id.
--- @type table<string, lsp_agent.Session>
M.sessions = {}
--- The session the chat commands act on.
M.current = nil

local listeners = {}

--- `fn(session)` is called (scheduled, coalesced) whenever a session changes.
function M.on_change(fn)
  table.insert(listeners, fn)
end

local dirty = {}
local scheduled = false

local function changed(session)
  dirty[session.id] = session
  if scheduled then
    return
  end
  scheduled = true
  vim.defer_fn(function()
    scheduled = false
    local sessions = dirty
    dirty = {}
    for _, s in pairs(sessions) do
      for _, fn in ipairs(listeners) do
        local ok, err = pcall(fn, s)
        if not ok then
          require("lsp_agent.log").error("rendering failed: %s", err)
        end
      end
    end
  end, 15)
end
M.changed = changed

--- @class lsp_agent.Session
local Session = {}
Session.__index = Session

--- @return lsp_agent.Session
function M.new(id, client_id)
  local s = setmetatable({ id = id, client_id = client_id }, Session)
  s:reset()
  return s
end

--- Forget everything (before a full replay).
function Session:reset()
  self.seq = 0
  self.title = ""
  self.state = "idle"
  self.stop_reason = nil
  self.error = nil
  self.items = {}
  self.tools = {}
  self.plan = nil
  self.usage = nil
  self.config_options = self.config_options or {}
  self.revert = nil
  self.review = nil
  self.review_stale = false
  self.last_change_set = nil
  self.last_user_message = nil
  self.compacting = false
  -- the chat re-closes the folds of a rebuilt session
  self.rebuilt = true
end

--- The session `id`, created on first use.
function M.get(id, client_id)
  local s = M.sessions[id]
  if not s then
    s = M.new(id, client_id)
    M.sessions[id] = s
  elseif client_id then
    s.client_id = client_id
  end
  return s
end

--- The index of the running turn's last item: the prompts queued behind the turn stay after it.
function Session:turn_end()
  local at = #self.items
  while at > 0 and self.items[at].queued do
    at = at - 1
  end
  return at
end

function Session:add(item)
  table.insert(self.items, item.queued and #self.items + 1 or self:turn_end() + 1, item)
  return item
end

--- The last text or thought segment of `message_id`, when it is the turn's last item.
function Session:segment(kind, message_id)
  local last = self.items[self:turn_end()]
  if last and last.kind == kind and last.message_id == message_id then
    return last
  end
  return self:add({ kind = kind, message_id = message_id, text = "" })
end

function Session:config_value(config_id)
  for _, option in ipairs(self.config_options or {}) do
    if option.configId == config_id then
      return option.currentValue, option
    end
  end
end

--- The handler of every `update.sessionUpdate` variant (protocol.md §3).
--- tests/nvim/test_protocol_drift.py checks that the keys are exactly the server's variants.
local apply = {}

function apply.user_message(s, u)
  for i, item in ipairs(s.items) do
    if item.kind == "user" and item.message_id == u.messageId then
      item.state = u.state
      if item.queued and u.state == "promoted" then
        -- its turn starts: it joins the conversation after the answer it waited for
        item.queued = nil
        table.remove(s.items, i)
        table.insert(s.items, s:turn_end() + 1, item)
      end
      return
    end
  end
  local blocks, context = {}, nil
  for _, block in ipairs(util.nn(u.content) or {}) do
    if block.type == "text" and block.text:match("^Editor context:") then
      context = block.text:gsub("^Editor context:\n?", "")
    else
      table.insert(blocks, block)
    end
  end
  s:add({
    kind = "user",
    message_id = u.messageId,
    text = util.blocks_text(blocks),
    blocks = blocks,
    context = context,
    state = u.state,
    -- admitted while a turn runs: it waits below that turn until it is promoted
    queued = u.state == "admitted" and s.state ~= "idle" or nil,
  })
  s.last_user_message = u.messageId
end

function apply.agent_message_chunk(s, u)
  local seg = s:segment("text", u.messageId)
  seg.text = seg.text .. (u.text or "")
end

function apply.agent_thought_chunk(s, u)
  local seg = s:segment("thought", u.messageId)
  seg.text = seg.text .. (u.text or "")
end

function apply.agent_message_end(s, u)
  if u.status and u.status ~= "completed" then
    s:add({ kind = "notice", message_id = u.messageId, text = "answer " .. u.status })
  end
end

function apply.tool_call_update(s, u)
  local tool = s.tools[u.toolCallId]
  if not tool then
    tool = s:add({ kind = "tool", id = u.toolCallId, message_id = u.messageId })
    s.tools[u.toolCallId] = tool
  end
  for _, key in ipairs({ "toolName", "title", "status", "rawInput", "content", "locations", "exitCode", "refused" }) do
    local value = util.nn(u[key])
    if value ~= nil then
      tool[key] = value
    end
  end
  -- `item.kind` is the item's own discriminator: the tool's kind is kept as `tool_kind`
  tool.tool_kind = util.nn(u.kind) or tool.tool_kind
  for _, block in ipairs(util.nn(u.content) or {}) do
    if block.type == "diff" and block.changeSetId then
      local uris = {}
      for _, change in ipairs(block.changes or {}) do
        table.insert(uris, change.uri)
      end
      s.last_change_set = { changeSetId = block.changeSetId, uris = uris }
    end
  end
end

function apply.plan_update(s, u)
  s.plan = util.nn(u.entries) or {}
end

function apply.state_update(s, u)
  s.state = u.state
  s.stop_reason = util.nn(u.stopReason)
  s.error = util.nn(u.error)
  for _, note in ipairs(util.nn(u.notes) or {}) do
    s:add({ kind = "notice", text = note })
  end
  if u.state == "idle" and s.stop_reason == "error" and s.error then
    -- in the conversation, with a retry (chat/render.lua renders it)
    s:add({ kind = "error", text = tostring(s.error.message) })
  end
end

function apply.usage_update(s, u)
  s.usage = u
end

function apply.config_option_update(s, u)
  s.config_options = util.nn(u.configOptions) or {}
end

function apply.session_info_update(s, u)
  s.title = util.nn(u.title) or s.title
  s.updated_at = util.nn(u.updatedAt) or s.updated_at
end

function apply.checkpoint_update(s, u)
  local names = {}
  for _, file in ipairs(util.nn(u.files) or {}) do
    local where = file.path or util.display_path(file.uri)
    table.insert(names, ("%s (+%s -%s)"):format(where, file.additions or 0, file.deletions or 0))
  end
  if #names > 0 then
    s:add({ kind = "notice", message_id = u.messageId, text = "changed " .. table.concat(names, ", ") })
  end
end

function apply.revert_update(s, u)
  local scope = util.nn(u.scope) or (s.revert and s.revert.scope) or "both"
  -- an undo or redo changes what waits for review without a `review_update` of its own:
  -- the list is fetched again so the signs follow (issue 35)
  s.review_stale = true
  if u.state == "staged" then
    s.revert = { message_id = util.nn(u.messageId), scope = scope }
  elseif u.state == "cleared" then
    s.revert = nil
  elseif u.state == "committed" and scope == "code" then
    -- only the files went back: every message stays
    s.revert = nil
  elseif u.state == "committed" then
    local keep = {}
    local dropping = false
    local target = s.revert and s.revert.message_id or util.nn(u.messageId)
    for _, item in ipairs(s.items) do
      if item.kind == "user" and item.message_id == target then
        dropping = true
      end
      if not dropping then
        table.insert(keep, item)
      end
    end
    s.items = keep
    s.revert = nil
  end
end

--- The review list changed (protocol.md "Review"): the counts per file are kept, the hunks
--- themselves are fetched again by `lsp_agent.review`.
function apply.review_update(s, u)
  s.review = util.nn(u.files) or {}
  s.review_stale = true
end

function apply.compaction_update(s, u)
  s.compacting = u.phase == "started"
  if u.phase == "ended" then
    s:add({ kind = "notice", text = u.auto and "conversation compacted (automatically)" or "conversation compacted" })
  end
end

function apply.permission_update(s, u)
  local tool = s.tools[u.toolCallId]
  if tool then
    tool.permission = u.state
    tool.permission_reason = util.nn(u.reason)
  end
end

function apply.question_update(s, u)
  local tool = s.tools[u.toolCallId]
  if tool then
    tool.question = u.state
  end
end

--- A prompt's `until` command ran after a turn (protocol.md "Until green"): one notice per
--- check, the way `lsp-agent run --until` prints it.
function apply.until_update(s, u)
  local head = ("until green: attempt %d/%d: %s"):format(u.attempt, u.maxAttempts, u.command)
  local text
  if u.verdict == "stopped" then
    text = head .. " not run: the turn did not finish"
  else
    local ended = util.nn(u.exitCode) and ("exited " .. u.exitCode) or (util.nn(u.error) or "failed")
    local next_step = ({
      passed = "",
      retry = "; its output goes to the agent",
      attempts = "; no attempts left",
      cost = "; the cost bound is reached",
    })[u.verdict] or ""
    text = head .. " " .. ended .. next_step
  end
  s:add({ kind = "notice", text = text })
end

function apply.internal(_, _) end

--- The variants handled (for the protocol drift test).
function M.handled_updates()
  local names = vim.tbl_keys(apply)
  table.sort(names)
  return names
end

--- Apply one update to the session.
--- @return boolean applied
function Session:apply(update)
  local fn = apply[update.sessionUpdate]
  if not fn then
    require("lsp_agent.log").debug("ignoring unknown session update %s", tostring(update.sessionUpdate))
    return false
  end
  fn(self, update)
  return true
end

--- Handle one `agent/session/update` notification's params.
--- @return "applied"|"repeat"|"gap"
function M.receive(params, client_id)
  local s = M.get(params.sessionId, client_id)
  local seq = params.seq
  if s.loading then
    -- a load with replay is under way: only its replayed updates (in order) count; live
    -- ones that raced ahead are part of the replay
    if seq ~= s.seq + 1 then
      return "repeat"
    end
  elseif seq <= s.seq then
    return "repeat"
  elseif seq > s.seq + 1 then
    return "gap"
  end
  s.seq = seq
  s:apply(params.update)
  changed(s)
  return "applied"
end

return M
