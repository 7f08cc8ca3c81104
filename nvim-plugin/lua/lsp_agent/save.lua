--- `agent/documents/save` (server -> client, protocol.md §6): save the buffers the agent just
--- edited, so the command it runs next (the tests, grep, git) reads the edit from the disk.
---
--- The server asks only for a buffer that held exactly the file on disk before its edit (a
--- buffer with the user's own unsaved changes is never saved for them), at the version its
--- edit produced. The plugin saves only at that version — the buffer's text is then exactly
--- the agent's — and as the user's own save would: `:write!` in the buffer, so BufWritePre /
--- BufWritePost run (a formatter on save, linters, the other servers' didSave). The `!` skips
--- Vim's "changed since reading it" question, which would stop here waiting for a key: the
--- server checked that the disk holds what the buffer held. A read-only buffer is not saved.
local log = require("lsp_agent.log")

local M = {}

--- One document: `{uri, saved, version?, reason?}` (SavedDocument).
function M.save(uri, version)
  local bufnr = vim.uri_to_bufnr(uri)
  local function refuse(reason)
    log.info("did not save %s for the agent: %s", uri, reason)
    return { uri = uri, saved = false, reason = reason }
  end
  if not vim.api.nvim_buf_is_loaded(bufnr) then
    return refuse("the buffer is not loaded")
  end
  local current = vim.lsp.util.buf_versions[bufnr]
  if current ~= version then
    return refuse(("the buffer changed after the edit (version %s, the edit made %s)"):format(current, version))
  end
  local bo = vim.bo[bufnr]
  if bo.buftype ~= "" then
    return refuse("not a file buffer")
  end
  if bo.readonly or not bo.modifiable then
    return refuse("the buffer is read-only")
  end
  local ok, err = pcall(vim.api.nvim_buf_call, bufnr, function()
    vim.cmd("silent keepalt keepjumps write!")
  end)
  if not ok then
    return refuse(tostring(err))
  end
  log.info("saved %s for the agent (version %s)", vim.api.nvim_buf_get_name(bufnr), version)
  return { uri = uri, saved = true, version = vim.lsp.util.buf_versions[bufnr] }
end

function M.handler(_, params)
  local saved = {}
  for _, document in ipairs(type(params) == "table" and params.documents or {}) do
    table.insert(saved, M.save(document.uri, document.version))
  end
  return { documents = saved }
end

return M
