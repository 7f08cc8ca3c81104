--- The server's start, per client: "starting" (the process is up and `initialize` is in
--- flight, or the server still builds the agent: its `lsp-agent/starting` progress), "ready",
--- or "failed" with the reason. Commands issued meanwhile wait here (bounded, never blocking
--- Neovim) instead of failing, and a start that fails is told once, with where to look.
local log = require("lsp_agent.log")

local M = {}

--- The work-done progress token the server starts under (docs/protocol.md §0).
M.PROGRESS_TOKEN = "lsp-agent/starting"
--- What the server's failure message and error replies begin with.
M.FAILURE_PREFIX = "lsp-agent failed to start: "
--- How long a command waits for the server to be initialized.
M.timeout_ms = 30000
--- How often the waiting commands look at their client (on_init also wakes them).
M.POLL_MS = 50

--- client id -> { initialized = boolean, progress = "starting"|"ready"|"failed"|nil,
---                 reason = string?, told = boolean (the failure was notified),
---                 starting_told = boolean }
M.clients = {}
--- client id -> list of { fn = fun(client|nil, err|nil), deadline = ms }
local waiters = {}
local timer

local function entry(client_id)
  local e = M.clients[client_id]
  if not e then
    e = {}
    M.clients[client_id] = e
  end
  return e
end

--- The reason without the server's prefix and its " (see the server's log)".
local function bare_reason(message)
  local reason = tostring(message)
  if vim.startswith(reason, M.FAILURE_PREFIX) then
    reason = reason:sub(#M.FAILURE_PREFIX + 1)
  end
  return (reason:gsub("%s*%(see the server's log%)%s*$", ""))
end

--- Where to look after a failed start.
function M.log_hint()
  return ("see :LspAgent log (the server's own output is in %s)"):format(vim.lsp.get_log_path())
end

--- The message of a failed start.
function M.failure_message(reason)
  return ("the server failed to start: %s; %s"):format(reason, M.log_hint())
end

--- The state of `client`: "starting", "ready" or "failed", and the reason of a failure.
function M.state(client)
  local e = M.clients[client.id] or {}
  if e.progress == "failed" then
    return "failed", e.reason
  end
  if client:is_stopped() and e.progress ~= "ready" and not client.initialized then
    return "failed", e.reason or "the server exited before it was ready"
  end
  if not client.initialized or e.progress == "starting" then
    return "starting"
  end
  return "ready"
end

--- The lsp_agent clients, also those still waiting for their `initialize` answer (which
--- `vim.lsp.get_clients()` leaves out unless asked with its `_uninitialized` filter).
function M.all_clients()
  return vim.lsp.get_clients({ name = require("lsp_agent.client").NAME, _uninitialized = true })
end

--- The state of the lsp_agent clients for the statusline: "starting", "failed" or nil
--- (ready, or none runs).
function M.summary()
  local result
  for _, client in ipairs(M.all_clients()) do
    local state = M.state(client)
    if state == "starting" then
      return "starting"
    elseif state == "failed" then
      result = "failed"
    end
  end
  return result
end

local function stop_timer()
  if timer and not timer:is_closing() then
    timer:stop()
    timer:close()
  end
  timer = nil
end

--- Run the waiters of `client_id` whose client is settled (or whose wait ran out).
function M.check(client_id)
  local list = waiters[client_id]
  if not list then
    return
  end
  local client = vim.lsp.get_client_by_id(client_id)
  local state, reason
  if client then
    state, reason = M.state(client)
  else
    state, reason = "failed", (M.clients[client_id] or {}).reason or "the server exited before it was ready"
  end
  local now = vim.uv.now()
  local keep, run = {}, {}
  for _, waiter in ipairs(list) do
    if state == "failed" then
      M.fail(client_id, reason)
      table.insert(run, { waiter.fn, nil, M.failure_message(reason) })
    elseif client and client.initialized then
      -- the server itself holds requests until its agent is up (the progress shows it)
      table.insert(run, { waiter.fn, client })
    elseif now >= waiter.deadline then
      local message = ("the server is not ready after %g s; %s"):format(M.timeout_ms / 1000, M.log_hint())
      log.error(message)
      table.insert(run, { waiter.fn, nil, message })
    else
      table.insert(keep, waiter)
    end
  end
  -- settled before the commands run, so one that raises is not run again
  waiters[client_id] = #keep > 0 and keep or nil
  if next(waiters) == nil then
    stop_timer()
  end
  for _, call in ipairs(run) do
    call[1](call[2], call[3])
  end
end

local function check_all()
  for client_id in pairs(vim.deepcopy(waiters)) do
    M.check(client_id)
  end
end

--- Tell once per client that it is starting (the command runs when it is ready).
local function tell_starting(client)
  local e = entry(client.id)
  if not e.starting_told then
    e.starting_told = true
    log.notify("starting the server… (the command runs when it is ready)")
  end
end

--- Call `fn(client)` once `client` is initialized, `fn(nil, message)` when its start failed
--- or did not end in time (the message said to the user).
function M.when_ready(client, fn)
  local state, reason = M.state(client)
  if state == "failed" then
    local message = M.failure_message(reason)
    log.error(message)
    return fn(nil, message)
  end
  if state == "starting" then
    tell_starting(client)
  end
  if client.initialized then
    return fn(client)
  end
  waiters[client.id] = waiters[client.id] or {}
  table.insert(waiters[client.id], { fn = fn, deadline = vim.uv.now() + M.timeout_ms })
  if not timer then
    timer = assert(vim.uv.new_timer())
    timer:start(M.POLL_MS, M.POLL_MS, vim.schedule_wrap(check_all))
  end
end

--- The start of `client_id` failed: remember why and tell it once.
function M.fail(client_id, reason)
  local e = entry(client_id)
  e.progress = "failed"
  e.reason = reason or e.reason or "the server failed to start"
  if not e.told then
    e.told = true
    log.error(M.failure_message(e.reason))
  end
end

--- Whether a request's error is the server's "failed to start" answer (then the failure is
--- recorded and told once, instead of as an error of that request).
function M.is_failure(client_id, err)
  local message = type(err) == "table" and err.message or err
  if type(message) ~= "string" or not vim.startswith(message, M.FAILURE_PREFIX) then
    return false
  end
  M.fail(client_id, bare_reason(message))
  return true
end

-- hooks of the client config ------------------------------------------------------------------

function M.on_init(client)
  entry(client.id).initialized = true
  vim.schedule(function()
    M.check(client.id)
  end)
end

function M.on_exit(code, signal, client_id)
  vim.schedule(function()
    local e = entry(client_id)
    if not e.initialized and e.progress == nil then
      local how = (signal and signal ~= 0) and ("signal " .. signal) or ("code " .. tostring(code))
      M.fail(client_id, ("the server exited (%s) before it was ready"):format(how))
    end
    M.check(client_id)
  end)
end

--- `on_error` (Neovim gives no client id): an error while a client waits for its
--- `initialize` answer (the server refused it) fails that start.
function M.on_error(code, err)
  for _, client in ipairs(M.all_clients()) do
    if not client.initialized and not client:is_stopped() then
      local name = vim.lsp.rpc.client_errors[code] or tostring(code)
      local text = type(err) == "string" and err or vim.inspect(err)
      M.fail(client.id, ("%s: %s"):format(name, text))
      vim.schedule(function()
        M.check(client.id)
      end)
    end
  end
end

--- `$/progress`: Neovim's handler, then the `lsp-agent/starting` begin / end.
function M.on_progress(err, params, ctx)
  local result = vim.lsp.handlers["$/progress"](err, params, ctx)
  if type(params) == "table" and params.token == M.PROGRESS_TOKEN and type(params.value) == "table" then
    local e = entry(ctx.client_id)
    e.initialized = true -- (also when a config of the user's replaced our on_init)
    if params.value.kind == "begin" and e.progress == nil then
      e.progress = "starting"
    elseif params.value.kind == "end" then
      if params.value.message == "ready" then
        e.progress = "ready"
        log.info("the server is ready (client %d)", ctx.client_id)
      elseif e.progress ~= "failed" then
        -- the reason follows in `window/showMessage` (which tells it)
        e.progress = "failed"
        e.reason = e.reason or "see the server's output"
      end
    end
    vim.cmd("redrawstatus!")
  end
  return result
end

--- `window/showMessage`: a failed start is told by the plugin, with the way to the log;
--- other messages go to Neovim's handler.
function M.on_show_message(err, params, ctx)
  if type(params) == "table" and type(params.message) == "string" and vim.startswith(params.message, M.FAILURE_PREFIX) then
    M.fail(ctx.client_id, bare_reason(params.message))
    vim.cmd("redrawstatus!")
    return vim.NIL
  end
  return vim.lsp.handlers["window/showMessage"](err, params, ctx)
end

return M
