--- `:LspAgent {subcommand} [args]` with completion.
local M = {}

local function api()
  return require("lsp_agent")
end

local function range_of(cmd)
  if cmd.range and cmd.range > 0 then
    return { cmd.line1, cmd.line2 }
  end
end

--- Subcommand -> function(args: string, cmd: table).
M.subcommands = {
  chat = function(args, cmd)
    api().chat(args, { new = cmd.bang, range = range_of(cmd) })
  end,
  compact = function()
    api().compact()
  end,
  ask = function(args, cmd)
    api().ask(args, { range = range_of(cmd), new = cmd.bang })
  end,
  ["until"] = function(args, cmd)
    api().until_green(args, nil, { new = cmd.bang })
  end,
  fix = function(args)
    api().fix({ prompt = args ~= "" and args or nil })
  end,
  explain = function(args, cmd)
    api().explain({ range = range_of(cmd), prompt = args ~= "" and args or nil })
  end,
  stop = function()
    api().stop()
  end,
  retry = function()
    api().retry()
  end,
  undo = function()
    api().undo()
  end,
  redo = function()
    api().redo()
  end,
  sessions = function(args)
    local verb, rest = args:match("^(%S+)%s*(.-)$")
    if verb == "search" then
      local everywhere = rest:match("^%-%-all%s*(.*)$")
      return api().search(everywhere or rest, { all = everywhere ~= nil })
    end
    if verb then
      return vim.notify(("lsp-agent: sessions takes nothing or search TEXT, not %q"):format(verb), vim.log.levels.ERROR)
    end
    api().sessions()
  end,
  resume = function(args)
    api().resume(args ~= "" and args or nil)
  end,
  model = function(args)
    api().model(args ~= "" and args or nil)
  end,
  mode = function(args)
    api().mode(args ~= "" and args or nil)
  end,
  diff = function()
    api().diff()
  end,
  permission = function()
    api().permission()
  end,
  allow = function(args)
    api().allow(args ~= "" and args or nil)
  end,
  permissions = function()
    require("lsp_agent.approvals").pick()
  end,
  review = function()
    api().review()
  end,
  codereview = function(args)
    require("lsp_agent.code_review").run(args)
  end,
  keep = function(args, cmd)
    require("lsp_agent.review").command("keep", args, range_of(cmd))
  end,
  ["undo-hunk"] = function(args, cmd)
    require("lsp_agent.review").command("undo", args, range_of(cmd))
  end,
  comment = function(args, cmd)
    local range = range_of(cmd) or {}
    require("lsp_agent.comments").comment_lines(0, range[1], range[2], args)
  end,
  ["undo-reason"] = function(args, cmd)
    local range = range_of(cmd) or {}
    require("lsp_agent.comments").undo_with_reason(0, range[1], range[2], args)
  end,
  ["send-comments"] = function()
    require("lsp_agent.comments").send()
  end,
  commit = function()
    require("lsp_agent.commit").run()
  end,
  rewind = function(args)
    api().rewind(args ~= "" and args or nil)
  end,
  log = function()
    api().log()
  end,
}

M.names = vim.tbl_keys(M.subcommands)
table.sort(M.names)

function M.run(cmd)
  local name, rest = cmd.args:match("^%s*(%S+)%s*(.-)%s*$")
  if not name then
    -- `:LspAgent` alone shows the chat, in normal mode (`i` writes, `q` closes it again)
    return api().chat(nil, { new = cmd.bang, insert = false })
  end
  local fn = M.subcommands[name]
  if not fn then
    return vim.notify(("lsp-agent: unknown subcommand %q (one of %s)"):format(name, table.concat(M.names, ", ")), vim.log.levels.ERROR)
  end
  fn(rest, cmd)
end

--- The options a new session would start with, from the server (`agent/config/options`),
--- asked once of a running client; nil when none runs.
local new_session_options = nil

local function server_options()
  if new_session_options then
    return new_session_options
  end
  local protocol = require("lsp_agent.protocol")
  for _, client in ipairs(vim.lsp.get_clients({ name = "lsp_agent" })) do
    if client.initialized then
      local answer = client:request_sync(protocol.requests.config_options, vim.empty_dict(), 2000)
      if answer and not answer.err and answer.result then
        new_session_options = answer.result.configOptions or {}
        return new_session_options
      end
    end
  end
end

--- The values of a session option (mode, model) as the server offers them: the current
--- session's options, else those a new session would start with.
local function option_values(config_id)
  local session = require("lsp_agent.session")
  local s = session.current and session.sessions[session.current]
  local options = s and s.config_options
  if not options or #options == 0 then
    options = server_options() or {}
  end
  local values = {}
  for _, option in ipairs(options) do
    if option.configId == config_id then
      for _, choice in ipairs(option.options or {}) do
        table.insert(values, choice.value)
      end
    end
  end
  if config_id == "mode" and #values == 0 then
    -- no server to ask yet: the modes setup() checks against
    values = vim.deepcopy(require("lsp_agent.protocol").modes)
  end
  return values
end

function M.complete(arg_lead, cmd_line, _)
  local words = vim.split(cmd_line:gsub("^%s*%S+!?%s*", "", 1), "%s+", { trimempty = false })
  local function filter(items)
    return vim.tbl_filter(function(item)
      return vim.startswith(item, arg_lead)
    end, items)
  end
  if #words <= 1 then
    return filter(M.names)
  end
  local sub = words[1]
  if #words == 2 then
    if sub == "mode" or sub == "model" then
      return filter(option_values(sub))
    end
    if sub == "sessions" then
      return filter({ "search" })
    end
    if sub == "keep" or sub == "undo-hunk" then
      return filter({ "all", "file" })
    end
    if sub == "codereview" then
      return filter({ "--staged", "--base" })
    end
    if sub == "allow" then
      return filter({ "once", "session", "always" })
    end
    if sub == "rewind" then
      return filter(vim.deepcopy(require("lsp_agent.protocol").revert_scopes))
    end
    if sub == "resume" then
      local ids = {}
      for _, s in ipairs(require("lsp_agent.actions").known_sessions) do
        table.insert(ids, s.sessionId)
      end
      for id in pairs(require("lsp_agent.session").sessions) do
        if not vim.list_contains(ids, id) then
          table.insert(ids, id)
        end
      end
      return filter(ids)
    end
  end
  return {}
end

function M.create()
  vim.api.nvim_create_user_command("LspAgent", M.run, {
    nargs = "*",
    range = true,
    bang = true,
    complete = M.complete,
    desc = "lsp-agent: chat, ask, until, fix, explain, stop, retry, compact, undo, redo, rewind, sessions, resume, model, mode, diff, permission, permissions, allow, review, codereview, keep, undo-hunk, undo-reason, comment, send-comments, commit, log",
  })
end

return M
