-- The `lsp_agent` language server config (`:help lsp-config`): `vim.lsp.enable("lsp_agent")`
-- is enough to use it; `require("lsp_agent").setup(opts)` sets the options it is built from.
---@type vim.lsp.Config
return require("lsp_agent.client").lsp_config()
