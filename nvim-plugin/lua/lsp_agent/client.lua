--- The LSP client: its `vim.lsp.Config`, finding or starting it, requests.
local config = require("lsp_agent.config")
local log = require("lsp_agent.log")
local util = require("lsp_agent.util")

local M = {}

M.NAME = "lsp_agent"

--- The workspace folder for a buffer: the nearest root marker, else the current directory.
function M.root_for(bufnr)
  local markers = config.options.root_markers or {}
  local root
  if bufnr and util.is_file_buffer(bufnr) and #markers > 0 then
    root = vim.fs.root(bufnr, markers)
  end
  return root or vim.fn.getcwd()
end

--- The `vim.lsp.Config` (also returned by `lsp/lsp_agent.lua`).
--- @return vim.lsp.Config
function M.lsp_config()
  local options = config.options
  return {
    cmd = options.cmd,
    cmd_env = options.cmd_env,
    -- only file buffers start the server (not the empty buffer Neovim starts with)
    root_dir = function(bufnr, on_dir)
      if util.is_file_buffer(bufnr) then
        on_dir(M.root_for(bufnr))
      end
    end,
    capabilities = {
      workspace = {
        applyEdit = true,
        -- Neovim applies versioned TextDocumentEdits but does not advertise it: without this
        -- the server sends unversioned `changes`.
        workspaceEdit = { documentChanges = true },
      },
      -- LSP 3.18: ghost text (lua/lsp_agent/completion.lua); Neovim 0.11 does not announce it
      textDocument = options.completion.enabled ~= false and { inlineCompletion = { dynamicRegistration = false } } or nil,
    },
    init_options = { agent = config.agent_init_options(options) },
    handlers = require("lsp_agent.handlers").handlers(),
    commands = vim.tbl_extend("error", require("lsp_agent.actions").client_commands(), require("lsp_agent.completion").client_commands()),
    on_init = function(client)
      log.info("server started: %s (client %d)", vim.inspect(client.server_info), client.id)
      require("lsp_agent.diagnostics").send_all(client)
      require("lsp_agent.startup").on_init(client)
    end,
    on_error = function(code, err)
      require("lsp_agent.startup").on_error(code, err)
    end,
    on_exit = function(code, signal, client_id)
      local startup = require("lsp_agent.startup")
      -- a start that failed is told by `startup` (with the reason); a crash later here
      local started = startup.clients[client_id] or {}
      if code ~= 0 and started.initialized and started.progress ~= "failed" then
        log.warn("the server exited with code %s (signal %s); %s", code, signal, startup.log_hint())
      end
      log.info("server exited (client %s, code %s)", client_id, code)
      startup.on_exit(code, signal, client_id)
    end,
  }
end

--- Running lsp_agent clients, the one attached to `bufnr` first.
function M.clients(bufnr)
  local list = {}
  if bufnr then
    list = vim.lsp.get_clients({ name = M.NAME, bufnr = bufnr })
  end
  for _, client in ipairs(vim.lsp.get_clients({ name = M.NAME })) do
    if not vim.list_contains(list, client) then
      table.insert(list, client)
    end
  end
  return list
end

--- The client for a session (the one that streamed it), or for the current buffer.
function M.get(session_id)
  if session_id then
    local s = require("lsp_agent.session").sessions[session_id]
    if s and s.client_id then
      local client = vim.lsp.get_client_by_id(s.client_id)
      if client and not client:is_stopped() then
        return client
      end
    end
  end
  return M.clients(vim.api.nvim_get_current_buf())[1]
end

--- Start (or reuse) the client for the current buffer without waiting.
function M.start()
  local bufnr = vim.api.nvim_get_current_buf()
  local resolved = vim.deepcopy(vim.lsp.config[M.NAME] or M.lsp_config())
  resolved.name = M.NAME
  resolved.root_dir = M.root_for(bufnr)
  local attach = util.is_file_buffer(bufnr)
  local id = vim.lsp.start(resolved, { bufnr = bufnr, attach = attach })
  return id and vim.lsp.get_client_by_id(id) or nil
end

--- Call `fn(client)` once a client is initialized (starting one if none runs, waiting for
--- one that is starting); `fn(nil, err)` when the server does not start (already told).
function M.with_client(fn, session_id)
  local client = M.get(session_id) or M.start()
  if not client then
    local message = "could not start the server (" .. vim.inspect(config.options.cmd) .. "); see :checkhealth lsp_agent"
    log.error(message)
    return fn(nil, message)
  end
  require("lsp_agent.startup").when_ready(client, fn)
end

--- The workspace folder uri of a client (its first folder, else its root).
function M.folder_uri(client)
  local folders = client.workspace_folders or {}
  if folders[1] then
    return folders[1].uri
  end
  if client.root_dir then
    return vim.uri_from_fname(client.root_dir)
  end
end

--- Describe a JSON-RPC error.
function M.describe_error(err)
  if type(err) == "table" then
    return ("%s (%s)"):format(tostring(err.message), tostring(err.code))
  end
  return tostring(err)
end

--- Send a request; `cb(err, result)` (errors are also logged unless `quiet`).
function M.request(client, method, params, cb, quiet)
  local ok = client:request(method, params, function(err, result)
    -- the server's "failed to start" answer is told once, not as this request's error
    if err and require("lsp_agent.startup").is_failure(client.id, err) then
      log.info("%s failed: %s", method, M.describe_error(err))
    elseif err and not quiet then
      log.error("%s failed: %s", method, M.describe_error(err))
    end
    if cb then
      cb(err, util.nn(result))
    end
  end)
  if not ok then
    local err = { code = -32603, message = "the server is not running" }
    if not quiet then
      log.error("%s failed: %s", method, err.message)
    end
    if cb then
      cb(err, nil)
    end
  end
end

--- Send a request from inside a coroutine and wait for it: `err, result`.
function M.await(client, method, params)
  local co = coroutine.running()
  assert(co, "M.await must run in a coroutine")
  local done, r_err, r_result = false, nil, nil
  M.request(client, method, params, function(err, result)
    done, r_err, r_result = true, err, result
    vim.schedule(function()
      if coroutine.status(co) == "suspended" then
        coroutine.resume(co)
      end
    end)
  end, true)
  while not done do
    coroutine.yield()
  end
  return r_err, r_result
end

--- `capabilities.experimental.agent` of the server.
function M.agent_capabilities(client)
  local caps = client and client.server_capabilities or {}
  local experimental = util.nn(caps.experimental) or {}
  return util.nn(experimental.agent) or {}
end

--- Whether the server offers a `lspAgent.*` command.
function M.has_command(client, name)
  local agent = M.agent_capabilities(client)
  if vim.list_contains(util.nn(agent.commands) or {}, name) then
    return true
  end
  local provider = client and client.server_capabilities and client.server_capabilities.executeCommandProvider
  return type(provider) == "table" and vim.list_contains(provider.commands or {}, name)
end

return M
