-- Defines :LspAgent before setup() is called (setup() with defaults runs on first use).
if vim.g.loaded_lsp_agent then
  return
end
vim.g.loaded_lsp_agent = true

if vim.fn.has("nvim-0.11") == 0 then
  vim.notify("lsp-agent needs Neovim 0.11 or newer", vim.log.levels.ERROR)
  return
end

vim.api.nvim_create_user_command("LspAgent", function(cmd)
  local lsp_agent = require("lsp_agent")
  if not lsp_agent.did_setup then
    lsp_agent.setup({})
  end
  require("lsp_agent.commands").run(cmd)
end, {
  nargs = "*",
  range = true,
  bang = true,
  complete = function(...)
    return require("lsp_agent.commands").complete(...)
  end,
  desc = "lsp-agent: chat, ask, fix, explain, stop, undo, redo, rewind, sessions, resume, model, mode, diff, permission, allow, review, keep, undo-hunk, log",
})
