--- lsp-agent for Neovim: a thin front-end of `lsp-agent serve`. See `:help lsp_agent`.
local config = require("lsp_agent.config")

local M = {}

M.did_setup = false

local function actions()
  return require("lsp_agent.actions")
end

local function chat()
  return require("lsp_agent.chat")
end

--- The plugin's `doc/` folder (beside `lua/`).
local function doc_dir()
  local source = debug.getinfo(1, "S").source:gsub("^@", "")
  return vim.fs.joinpath(vim.fs.dirname(vim.fs.dirname(vim.fs.dirname(vim.fs.abspath(source)))), "doc")
end

--- `:helptags` for a plugin added to 'runtimepath' by hand (plugin managers do it
--- themselves): without `doc/tags`, `:help lsp_agent` finds nothing. Only when the folder
--- can be written; a failure is logged, never raised.
local function ensure_helptags()
  local dir = doc_dir()
  if vim.fn.filereadable(vim.fs.joinpath(dir, "tags")) == 1 or vim.fn.filewritable(dir) ~= 2 then
    return false
  end
  local ok, err = pcall(vim.cmd.helptags, vim.fn.fnameescape(dir))
  if not ok then
    require("lsp_agent.log").warn("could not generate the help tags in %s: %s", dir, err)
  end
  return ok
end

--- Configure the plugin (validated; raises naming a bad option), register the `lsp_agent`
--- LSP config and enable it, define `:LspAgent`, forward diagnostics, make `:help
--- lsp_agent` work.
--- @param opts? lsp_agent.Options
function M.setup(opts)
  local options = config.set(opts)
  ensure_helptags()
  vim.lsp.config(require("lsp_agent.client").NAME, require("lsp_agent.client").lsp_config())
  if options.autostart then
    vim.lsp.enable(require("lsp_agent.client").NAME)
  end
  require("lsp_agent.commands").create()
  require("lsp_agent.diagnostics").setup()
  require("lsp_agent.review")
  chat().setup()
  require("lsp_agent.focus").setup()
  require("lsp_agent.completion").setup() -- inline completion and next edits (issue 36)
  for action, lhs in pairs(options.keymaps.global or {}) do
    if lhs then
      vim.keymap.set("n", lhs, function()
        M[action]()
      end, { desc = "lsp-agent: " .. action })
    end
  end
  M.did_setup = true
  return options
end

--- Open the chat (current session, or a new one with `opts.new`); send `text` when given,
--- otherwise put the cursor in the prompt area. `opts.range` ({line1, line2}, e.g. from
--- `:'<,'>LspAgent chat`): the selection goes with the prompt as focus.
function M.chat(text, opts)
  opts = opts or {}
  local has_text = text ~= nil and text ~= ""
  chat().open(nil, {
    new = opts.new,
    range = opts.range,
    focus_prompt = true,
    insert = not has_text and opts.insert ~= false,
    on_open = function(session_id)
      if has_text then
        chat().send(session_id, text)
      end
    end,
  })
end

--- Work until `command` passes (protocol.md "Until green"): `task` (asked for when nil; an
--- empty answer means "make it pass") goes to the current session (a new one with
--- `opts.new`) with `until = { command = command }`; after each turn the server runs the
--- command and, while it fails, gives the agent its output for another turn (at most
--- `opts.max_attempts`, 5 by default). Each check is a notice in the chat.
function M.until_green(command, task, opts)
  opts = opts or {}
  command = vim.trim(command or "")
  if command == "" then
    return require("lsp_agent.log").error("until takes the command that must pass, e.g. :LspAgent until make test")
  end
  local goal = { command = command, maxAttempts = opts.max_attempts }
  local function go(text)
    if text == nil then
      return -- cancelled
    end
    if vim.trim(text) == "" then
      text = ("Make `%s` pass."):format(command)
    end
    chat().open(nil, {
      new = opts.new,
      on_open = function(session_id)
        chat().send(session_id, text, { ["until"] = goal })
      end,
    })
  end
  if task ~= nil then
    return go(task)
  end
  vim.ui.input({ prompt = ("Task (until `%s` passes): "):format(command) }, go)
end

--- Ask about the code: `text` is the question (asked for when nil); `opts.range` ({line1,
--- line2} or an LSP range) takes the selection as context. `opts.new`: a new session.
function M.ask(text, opts)
  opts = opts or {}
  local bufnr = vim.api.nvim_get_current_buf()
  local range = opts.range
  if range and range[1] then
    range = actions().line_range(bufnr, range[1], range[2] or range[1])
  end
  local function go(prompt)
    if prompt and prompt ~= "" then
      actions().about("ask", { bufnr = bufnr, range = range, prompt = prompt, new = opts.new })
    end
  end
  if text and text ~= "" then
    return go(text)
  end
  vim.ui.input({ prompt = "Ask the agent: " }, go)
end

--- Ask the agent to fix the diagnostics under the cursor (or `opts.diagnostics`).
function M.fix(opts)
  opts = opts or {}
  local util = require("lsp_agent.util")
  local bufnr = vim.api.nvim_get_current_buf()
  local found = opts.diagnostics or actions().diagnostics_at_cursor(bufnr)
  if #found == 0 then
    return require("lsp_agent.log").warn("no diagnostic under the cursor")
  end
  local lsp_diagnostics, first, last = {}, nil, nil
  for _, d in ipairs(found) do
    local converted = d.range and d or util.to_lsp_diagnostic(d)
    table.insert(lsp_diagnostics, converted)
    first = math.min(first or math.huge, converted.range.start.line)
    last = math.max(last or -1, converted.range["end"].line)
  end
  local range = actions().line_range(bufnr, first + 1, last + 1)
  actions().about("fix", { bufnr = bufnr, range = range, diagnostics = lsp_diagnostics, prompt = opts.prompt })
end

--- Ask the agent to explain the selection (`opts.range`) or the current line.
function M.explain(opts)
  opts = opts or {}
  local bufnr = vim.api.nvim_get_current_buf()
  local range = opts.range
  if not range then
    local line = vim.api.nvim_win_get_cursor(0)[1]
    range = { line, line }
  end
  if range[1] then
    range = actions().line_range(bufnr, range[1], range[2] or range[1])
  end
  actions().about("explain", { bufnr = bufnr, range = range, prompt = opts.prompt })
end

--- Code actions of lsp-agent for the cursor line, with the diagnostics of every source in
--- the request's context (Neovim's own `vim.lsp.buf.code_action()` sends each server only
--- its own diagnostics, so "Ask agent to fix" would not see the others').
function M.code_action()
  local util = require("lsp_agent.util")
  local bufnr = vim.api.nvim_get_current_buf()
  local lnum = vim.api.nvim_win_get_cursor(0)[1] - 1
  local diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr, { lnum = lnum })) do
    table.insert(diagnostics, util.to_lsp_diagnostic(d))
  end
  vim.lsp.buf.code_action({
    context = { diagnostics = diagnostics },
    filter = function(action)
      local command = type(action.command) == "table" and action.command.command or action.command
      return type(command) == "string" and command:match("^lspAgent%.") ~= nil
    end,
  })
end

--- Stop the current session's turn.
function M.stop()
  actions().stop()
end

--- Send the last prompt of the current session again (after a failed turn).
function M.retry()
  actions().retry()
end

--- Compact the current session's conversation now (frees the context window).
function M.compact()
  actions().compact()
end

--- Undo the last prompt (files back as before; the prompt is offered again).
function M.undo()
  actions().undo()
end

--- Bring back what undo took back.
function M.redo()
  actions().redo()
end

--- Pick a session of this workspace and open it.
function M.sessions()
  actions().sessions()
end

--- Find sessions by what was said or done in them and open the one picked;
--- `opts.all`: in every workspace.
function M.search(query, opts)
  actions().search(query, opts)
end

--- Open a session by id (the most recent one when nil), rebuilt from the server.
function M.resume(session_id)
  actions().resume(session_id)
end

--- Set the model (picked when `value` is nil).
function M.model(value)
  actions().set_option("model", value)
end

--- Set the mode, "build" or "plan" (picked when `value` is nil).
function M.mode(value)
  actions().set_option("mode", value)
end

--- Show the diff of the pending (or last) proposed edit.
function M.diff()
  actions().diff()
end

--- Show the pending permission prompt again (after it was dismissed, or from a diff tab).
function M.permission()
  require("lsp_agent.permission").answer()
end

--- Answer the pending permission with an allow (`kind`: "once" (default), "session" or
--- "always"); from an edit's diff tab, the proposal as you edited it is what lands.
function M.allow(kind)
  require("lsp_agent.permission").allow(kind)
end

--- Fill the quickfix list with the current session's pending hunks (and open it).
function M.review()
  require("lsp_agent.review").show()
end

--- Keep the pending hunks of `opts.range` ({line1, line2}; default the cursor line), or
--- `opts.all` (every pending hunk of the session) or `opts.file` (of the current buffer).
function M.keep(opts)
  opts = opts or {}
  local what = opts.all and "all" or (opts.file and "file" or nil)
  require("lsp_agent.review").command("keep", what, opts.range)
end

--- Undo the pending hunks of `opts.range` (or `opts.all`, `opts.file`), like `keep`.
function M.undo_hunk(opts)
  opts = opts or {}
  local what = opts.all and "all" or (opts.file and "file" or nil)
  require("lsp_agent.review").command("undo", what, opts.range)
end

--- Rewind to before the last prompt (or the prompt under the cursor in the chat): `scope`
--- "both" (files and conversation), "code" (only the files) or "conversation" (only the
--- messages); picked when nil.
function M.rewind(scope)
  actions().rewind(scope)
end

--- Show the plugin's log.
function M.log()
  local lines = require("lsp_agent.log").lines()
  table.insert(lines, "")
  table.insert(lines, "Neovim's LSP log: " .. vim.lsp.get_log_path())
  vim.cmd("botright new")
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].modifiable = false
  pcall(vim.api.nvim_buf_set_name, buf, "lsp-agent://log")
end

--- For 'statusline': e.g. "agent: ● running 12%"; "" without a session.
function M.statusline()
  return chat().statusline()
end

return M
