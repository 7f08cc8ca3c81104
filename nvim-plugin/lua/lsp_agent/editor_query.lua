--- `agent/editor/query` (server -> client, protocol.md): the agent asks what the user's own
--- language servers know (definitions, references, hover, symbols…). Answered by the
--- buffer's *other* clients — never lsp-agent itself — in LSP's own shapes, nothing
--- converted. A file without a buffer is loaded hidden (`bufadd` + `bufload`, unlisted) so
--- its servers attach; the wait for them is bounded, and the server gives up after 10 s.
local log = require("lsp_agent.log")
local util = require("lsp_agent.util")

local M = {}

--- The LSP method of each kind the plugin answers (advertised as `editorQueries`).
M.METHODS = {
  definition = "textDocument/definition",
  references = "textDocument/references",
  hover = "textDocument/hover",
  documentSymbols = "textDocument/documentSymbol",
  workspaceSymbols = "workspace/symbol",
  implementation = "textDocument/implementation",
  typeDefinition = "textDocument/typeDefinition",
}

--- The kinds, in the contract's order (`initializationOptions.agent.editorQueries`).
M.KINDS = { "definition", "references", "hover", "documentSymbols", "workspaceSymbols", "implementation", "typeDefinition" }

--- Milliseconds to wait for a language server to attach to a buffer loaded for a query,
--- and for all answers (below the server's 10 s).
M.attach_timeout = 3000
M.answer_timeout = 8000

local function agent_name()
  return require("lsp_agent.client").NAME
end

--- Sleep inside the RPC coroutine without blocking the editor.
local function sleep(ms)
  local co = coroutine.running()
  vim.defer_fn(function()
    if coroutine.status(co) == "suspended" then
      coroutine.resume(co)
    end
  end, ms)
  coroutine.yield()
end

--- The clients of `bufnr` (every buffer when nil) other than lsp-agent that support `method`.
function M.other_clients(bufnr, method)
  local found = {}
  for _, client in ipairs(vim.lsp.get_clients(bufnr and { bufnr = bufnr } or nil)) do
    if client.name ~= agent_name() and not client:is_stopped() and client:supports_method(method, bufnr) then
      table.insert(found, client)
    end
  end
  return found
end

--- The buffer of `uri`, loaded without being shown when it is not loaded yet.
local function buffer_of(uri)
  local bufnr = vim.uri_to_bufnr(uri)
  if not vim.api.nvim_buf_is_loaded(bufnr) then
    local fname = vim.uri_to_fname(uri)
    if vim.fn.filereadable(fname) ~= 1 then
      return nil
    end
    -- unlisted (bufadd); BufRead and FileType run, so servers attach. No swap-file dialog:
    -- nobody is looking at this buffer.
    local shortmess = vim.o.shortmess
    vim.o.shortmess = shortmess .. "A"
    local ok, err = pcall(vim.fn.bufload, bufnr)
    vim.o.shortmess = shortmess
    if not ok then
      log.info("could not load %s for an editor query: %s", util.display_path(uri), err)
      return nil
    end
    log.info("loaded %s hidden for an editor query", util.display_path(uri))
  end
  return bufnr
end

--- Wait (bounded) until a client that answers `method` is attached to `bufnr`.
local function wait_for_clients(bufnr, method)
  local waited = 0
  local clients = M.other_clients(bufnr, method)
  while #clients == 0 and waited < M.attach_timeout do
    sleep(50)
    waited = waited + 50
    clients = M.other_clients(bufnr, method)
  end
  return clients
end

--- Send `method` to each client and wait for every answer (bounded): the results, in order.
local function ask_all(clients, method, params, bufnr)
  local co = coroutine.running()
  local results, pending = {}, #clients
  local waiting = true
  for i, client in ipairs(clients) do
    local ok = client:request(method, params, function(err, result)
      if err then
        log.info("%s of %s failed: %s", method, client.name, require("lsp_agent.client").describe_error(err))
      else
        results[i] = util.nn(result)
      end
      pending = pending - 1
      if pending == 0 and waiting then
        vim.schedule(function()
          if coroutine.status(co) == "suspended" then
            coroutine.resume(co)
          end
        end)
      end
    end, bufnr)
    if not ok then
      pending = pending - 1
    end
  end
  if pending > 0 then
    local timed_out = false
    vim.defer_fn(function()
      timed_out = true
      if waiting and coroutine.status(co) == "suspended" then
        coroutine.resume(co)
      end
    end, M.answer_timeout)
    while pending > 0 and not timed_out do
      coroutine.yield()
    end
    if pending > 0 then
      log.info("%s: %d server(s) did not answer in time", method, pending)
    end
  end
  waiting = false
  local ordered = {}
  for i = 1, #clients do
    if results[i] ~= nil then
      table.insert(ordered, results[i])
    end
  end
  return ordered
end

--- The LSP params of a query.
local function lsp_params(kind, params)
  if kind == "workspaceSymbols" then
    return { query = params.query or "" }
  end
  local lsp = { textDocument = { uri = params.uri } }
  if kind ~= "documentSymbols" then
    lsp.position = params.position
  end
  if kind == "references" then
    lsp.context = { includeDeclaration = true }
  end
  return lsp
end

--- Flatten the answers: a single Location, Hover… or a list of them, from each server.
local function items_of(kind, results)
  local items = {}
  for _, result in ipairs(results) do
    if kind == "hover" then
      return { result }
    end
    if vim.islist(result) then
      vim.list_extend(items, result)
    elseif type(result) == "table" then
      table.insert(items, result)
    end
  end
  return items
end

--- Answer one query; runs in the RPC coroutine. `{items = [...]}`, empty when nobody knows.
function M.answer(params)
  if type(params) ~= "table" then
    return { items = {} }
  end
  local kind = params.kind
  local method = M.METHODS[kind]
  if not method then
    log.info("editor query of an unknown kind %s", tostring(kind))
    return { items = {} }
  end
  local bufnr, clients
  if kind == "workspaceSymbols" then
    clients = M.other_clients(nil, method)
  else
    if type(params.uri) ~= "string" or (kind ~= "documentSymbols" and type(params.position) ~= "table") then
      return { items = {} }
    end
    bufnr = buffer_of(params.uri)
    if not bufnr then
      return { items = {} }
    end
    clients = wait_for_clients(bufnr, method)
  end
  if #clients == 0 then
    log.info("editor query %s: no language server answers %s", kind, method)
    return { items = {} }
  end
  local items = items_of(kind, ask_all(clients, method, lsp_params(kind, params), bufnr))
  log.info("editor query %s answered with %d item(s)", kind, #items)
  return { items = items }
end

--- The handler (`vim.lsp.ClientConfig.handlers`).
function M.handler(_, params, _)
  local ok, result = pcall(M.answer, params)
  if not ok then
    log.warn("editor query failed: %s", result)
    return { items = {} }
  end
  return result
end

return M
