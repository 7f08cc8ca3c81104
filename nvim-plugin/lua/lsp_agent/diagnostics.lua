--- Forward the editor's diagnostics (every source) to the agent: `agent/diagnostics`,
--- debounced after `DiagnosticChanged` (protocol.md §2).
local config = require("lsp_agent.config")
local log = require("lsp_agent.log")
local protocol = require("lsp_agent.protocol")
local util = require("lsp_agent.util")

local M = {}

local pending = {}
local timer = nil

--- The `agent/diagnostics` item of a buffer (nil for buffers that are not files).
function M.item(bufnr)
  if not util.is_file_buffer(bufnr) then
    return nil
  end
  local diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(diagnostics, util.to_lsp_diagnostic(d))
  end
  local item = { uri = vim.uri_from_bufnr(bufnr), diagnostics = diagnostics }
  local version = vim.lsp.util.buf_versions[bufnr]
  if type(version) == "number" then
    item.version = version
  end
  return item
end

local function send(items, clients)
  if #items == 0 then
    return
  end
  local sent = 0
  for _, client in ipairs(clients or require("lsp_agent.client").clients()) do
    if client.initialized and not client:is_stopped() then
      client:notify(protocol.notifications.diagnostics, { items = items })
      sent = sent + 1
    end
  end
  if sent > 0 then
    log.debug("forwarded the diagnostics of %d buffer(s)", #items)
  end
end

function M.flush()
  local items = {}
  for bufnr in pairs(pending) do
    local item = vim.api.nvim_buf_is_valid(bufnr) and M.item(bufnr)
    if item then
      table.insert(items, item)
    end
  end
  pending = {}
  send(items)
end

--- Every buffer's diagnostics, to a client that just started.
function M.send_all(client)
  if not config.options.forward_diagnostics then
    return
  end
  local items = {}
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) and #vim.diagnostic.get(bufnr) > 0 then
      local item = M.item(bufnr)
      if item then
        table.insert(items, item)
      end
    end
  end
  send(items, { client })
end

local function on_changed(args)
  if not config.options.forward_diagnostics then
    return
  end
  pending[args.buf] = true
  if not timer then
    timer = assert(vim.uv.new_timer())
  end
  timer:stop()
  timer:start(config.options.diagnostics_debounce, 0, vim.schedule_wrap(M.flush))
end

function M.setup()
  local group = vim.api.nvim_create_augroup("lsp_agent_diagnostics", { clear = true })
  vim.api.nvim_create_autocmd("DiagnosticChanged", { group = group, callback = on_changed })
end

return M
