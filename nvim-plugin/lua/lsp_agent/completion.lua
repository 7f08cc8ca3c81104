--- Inline completion: ghost text from the agent's server over the standard LSP 3.18
--- `textDocument/inlineCompletion` (the server advertises `inlineCompletionProvider` only when
--- the folder's `completion.enabled` is set, so nothing is asked otherwise).
---
--- On Neovim 0.12+, where `vim.lsp.inline_completion` exists, Neovim's own client shows and
--- accepts it (`completion.builtin`); this module only maps the accept key. On 0.11 the
--- plugin does it: the request goes after a pause in typing (`completion.debounce`), the one
--- in flight is cancelled (`$/cancelRequest`) on the next keystroke, the first item is shown
--- as an extmark (`LspAgentGhostText`) and only if the buffer (changedtick) and the cursor are
--- still where the request was made — a stale answer is never shown.
local config = require("lsp_agent.config")
local keys = require("lsp_agent.keys")
local log = require("lsp_agent.log")
local protocol = require("lsp_agent.protocol")
local shared = require("lsp_agent.suggestion")

local M = {}

M.ns = vim.api.nvim_create_namespace("lsp_agent_completion")
M.METHOD = "textDocument/inlineCompletion"
--- Per buffer: { client_id, timer, request = {client, id, tick, cursor}, ghost = {...}, prev }.
M.buffers = {}

vim.api.nvim_set_hl(0, "LspAgentGhostText", { default = true, link = "Comment" })

local group = vim.api.nvim_create_augroup("lsp_agent_completion", { clear = true })

local function options()
  return config.options.completion or {}
end

--- Whether Neovim's own inline completion (0.12+) is there and wanted.
function M.use_builtin()
  return options().builtin ~= false and type(vim.lsp.inline_completion) == "table"
    and type(vim.lsp.inline_completion.enable) == "function"
end

local cursor = shared.cursor

local function insert_text(item)
  local text = item.insertText
  if type(text) == "table" then
    return text.value
  end
  return text
end

--- Hide the ghost text (the answer stays unknown to the server: only an accept is told).
function M.clear(bufnr)
  local state = M.buffers[bufnr]
  if state and state.ghost then
    state.ghost = nil
    if vim.api.nvim_buf_is_valid(bufnr) then
      vim.api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
    end
  end
end

--- Cancel the request in flight and the pending debounce.
local function cancel(bufnr)
  local state = M.buffers[bufnr]
  if state then
    if state.timer then
      state.timer:stop()
    end
    shared.cancel(state)
  end
end

--- What the item adds at the cursor, or nil when it cannot be shown there (its range starts
--- elsewhere and its text does not continue what is typed since).
local function ghost_for(bufnr, item, encoding, at)
  local text = insert_text(item)
  if type(text) ~= "string" or text == "" then
    return nil
  end
  local row, col = at[1], at[2]
  local start_row, start_col, end_row, end_col = row, col, row, col
  local range = item.range
  if type(range) == "table" then
    start_row, start_col = shared.to_byte(bufnr, range.start, encoding)
    end_row, end_col = shared.to_byte(bufnr, range["end"], encoding)
    if not start_row or not end_row then
      return nil
    end
    if start_row > row or (start_row == row and start_col > col) or end_row < row or (end_row == row and end_col < col) then
      return nil -- the range does not contain the cursor
    end
    local typed = table.concat(vim.api.nvim_buf_get_text(bufnr, start_row, start_col, row, col, {}), "\n")
    if text:sub(1, #typed) ~= typed then
      return nil
    end
    text = text:sub(#typed + 1)
  end
  if text == "" then
    return nil
  end
  return {
    item = item,
    shown = text,
    range = { start_row, start_col, end_row, end_col },
    full = insert_text(item),
  }
end

local function show(bufnr, ghost, at)
  local lines = vim.split(ghost.shown, "\n", { plain = true })
  local virt_lines = {}
  for i = 2, #lines do
    table.insert(virt_lines, { { lines[i], "LspAgentGhostText" } })
  end
  vim.api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
  ghost.mark = vim.api.nvim_buf_set_extmark(bufnr, M.ns, at[1], at[2], {
    virt_text = { { lines[1], "LspAgentGhostText" } },
    virt_text_pos = "inline",
    virt_lines = #virt_lines > 0 and virt_lines or nil,
    hl_mode = "combine",
    priority = 1000,
  })
  ghost.at = at
end

local function on_result(bufnr, request, err, result)
  local state = M.buffers[bufnr]
  if not state or state.request ~= request then
    return -- cancelled or superseded: a newer keystroke owns the buffer
  end
  state.request = nil
  if err then
    if err.code ~= -32800 then -- RequestCancelled
      log.info("inline completion failed: %s", err.message or vim.inspect(err))
    end
    return
  end
  local items = type(result) == "table" and (result.items or (vim.islist(result) and result)) or {}
  local item = items[1]
  if type(item) ~= "table" then
    return
  end
  if vim.fn.pumvisible() == 1 then
    -- the completion menu is open: its keys (<Tab> among them, with nvim-cmp & co.) are its own
    log.info("inline completion not shown: the completion menu is open")
    return
  end
  local fresh = vim.api.nvim_buf_is_valid(bufnr)
    and vim.api.nvim_get_current_buf() == bufnr
    and vim.api.nvim_get_mode().mode:sub(1, 1) == "i"
    and vim.b[bufnr].changedtick == request.tick
    and vim.deep_equal(cursor(), request.cursor)
  if not fresh then
    log.info("dropped a stale inline completion (the buffer or the cursor moved on)")
    return
  end
  local ghost = ghost_for(bufnr, item, request.client.offset_encoding, request.cursor)
  if not ghost then
    return
  end
  ghost.client_id = request.client.id
  ghost.tick = request.tick
  state.ghost = ghost
  show(bufnr, ghost, request.cursor)
  log.info("inline completion shown: %s", vim.inspect(ghost.shown))
end

--- Send the request for the cursor of the current window (buffer `bufnr`).
function M.request(bufnr)
  local state = M.buffers[bufnr]
  local client = state and vim.lsp.get_client_by_id(state.client_id)
  if not client or client:is_stopped() or vim.api.nvim_get_current_buf() ~= bufnr then
    return
  end
  if vim.api.nvim_get_mode().mode:sub(1, 1) ~= "i" then
    return
  end
  cancel(bufnr)
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  params.context = { triggerKind = 2 } -- Automatic
  local request = { client = client, tick = vim.b[bufnr].changedtick, cursor = cursor() }
  state.request = request
  local ok, id = client:request(M.METHOD, params, function(err, result)
    on_result(bufnr, request, err, result)
  end, bufnr)
  request.id = id
  if not ok and state.request == request then
    state.request = nil
  end
end

--- The next keystroke: hide the ghost text, cancel what is in flight, wait for a pause.
--- (`InsertEnter` comes before the mode is "i": the request checks the mode when it goes.)
local function on_typed(bufnr)
  M.clear(bufnr)
  cancel(bufnr)
  local state = M.buffers[bufnr]
  if not state then
    return
  end
  shared.debounce(state, options().debounce or 150, function()
    M.request(bufnr)
  end)
end

--- Put the ghost text's item into the buffer (replacing its range), the cursor after it,
--- then run the item's command (the server's `lsp-agent.inlineCompletionAccepted`, which
--- reports the accept). Returns false when nothing is shown.
function M.accept(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local state = M.buffers[bufnr]
  local ghost = state and state.ghost
  local stale = not ghost or vim.b[bufnr].changedtick ~= ghost.tick or not vim.deep_equal(cursor(), ghost.at)
  if stale or vim.fn.pumvisible() == 1 then
    M.clear(bufnr)
    return false
  end
  M.clear(bufnr)
  cancel(bufnr)
  local end_row, end_col = shared.apply(bufnr, ghost.range, ghost.full)
  vim.api.nvim_win_set_cursor(0, { end_row + 1, end_col })
  log.info("inline completion accepted")
  local client = vim.lsp.get_client_by_id(ghost.client_id)
  local command = ghost.item.command
  if client and type(command) == "table" and type(command.command) == "string" then
    client:exec_cmd(command, { bufnr = bufnr })
  end
  return true
end

--- Hide the ghost text and forget the request (leaving insert mode, another buffer).
function M.dismiss(bufnr)
  M.clear(bufnr)
  cancel(bufnr)
end

local function map_accept(bufnr, use_builtin)
  local maps = config.options.keymaps.completion or {}
  local lhs = maps.accept
  if lhs then
    local prev = keys.previous("i", lhs)
    vim.keymap.set("i", lhs, function()
      local accepted
      if use_builtin then
        accepted = vim.lsp.inline_completion.get({ bufnr = bufnr })
      else
        accepted = M.accept(bufnr)
      end
      if not accepted then
        keys.fallback(lhs, prev)
      end
    end, { buffer = bufnr, desc = "lsp-agent: accept the inline completion" })
  end
  if maps.dismiss and not use_builtin then
    local prev = keys.previous("i", maps.dismiss)
    vim.keymap.set("i", maps.dismiss, function()
      local state = M.buffers[bufnr]
      if state and state.ghost then
        return M.dismiss(bufnr)
      end
      keys.fallback(maps.dismiss, prev)
    end, { buffer = bufnr, desc = "lsp-agent: hide the inline completion" })
  end
end

--- Start inline completion in `bufnr` for `client` (its server offers it).
function M.attach(client, bufnr)
  if options().enabled == false or M.buffers[bufnr] then
    return
  end
  if not client:supports_method(M.METHOD, bufnr) or not client.server_capabilities.inlineCompletionProvider then
    return
  end
  M.buffers[bufnr] = { client_id = client.id }
  if M.use_builtin() then
    vim.lsp.inline_completion.enable(true, { bufnr = bufnr, client_id = client.id })
    map_accept(bufnr, true)
    log.info("inline completion in buffer %d: Neovim's own (vim.lsp.inline_completion)", bufnr)
    return
  end
  -- typing, and entering insert mode (as Copilot does: `A` at a line's end offers its rest)
  vim.api.nvim_create_autocmd({ "TextChangedI", "TextChangedP", "InsertEnter" }, {
    group = group,
    buffer = bufnr,
    callback = function()
      on_typed(bufnr)
    end,
  })
  vim.api.nvim_create_autocmd("CursorMovedI", {
    group = group,
    buffer = bufnr,
    callback = function()
      local state = M.buffers[bufnr]
      if state and state.ghost and not vim.deep_equal(cursor(), state.ghost.at) then
        M.clear(bufnr)
      end
    end,
  })
  vim.api.nvim_create_autocmd({ "InsertLeave", "BufLeave" }, {
    group = group,
    buffer = bufnr,
    callback = function()
      M.dismiss(bufnr)
    end,
  })
  map_accept(bufnr, false)
  log.info("inline completion in buffer %d", bufnr)
end

--- Stop in `bufnr` (the client detached).
function M.detach(bufnr)
  local state = M.buffers[bufnr]
  if not state then
    return
  end
  M.dismiss(bufnr)
  shared.close(state)
  M.buffers[bufnr] = nil
  pcall(vim.api.nvim_clear_autocmds, { group = group, buffer = bufnr })
  local maps = config.options.keymaps.completion or {}
  for _, lhs in ipairs({ maps.accept, maps.dismiss }) do
    if lhs and vim.api.nvim_buf_is_valid(bufnr) then
      pcall(vim.keymap.del, "i", lhs, { buffer = bufnr })
    end
  end
end

--- Client-side commands: the server's item command that reports an accept (run by
--- `accept` here, or by Neovim's own inline completion on 0.12+).
function M.client_commands()
  return {
    [protocol.client_commands.inline_accepted] = function(command, ctx)
      local id = (command.arguments or {})[1]
      local client = vim.lsp.get_client_by_id(ctx.client_id)
      if client and type(id) == "string" then
        client:notify(protocol.notifications.next_edit_feedback, { id = id, accepted = true })
      end
    end,
  }
end

--- `window/logMessage`: Neovim's own handling (its LSP log), and the server's note that inline
--- completion paused (the hourly token cap, protocol.md §12a) shown as a warning — otherwise
--- the ghost text would just stop with no word why. The server says it once per pause.
function M.on_log_message(err, params, ctx)
  local default = vim.lsp.handlers["window/logMessage"]
  if default then
    default(err, params, ctx)
  end
  if type(params) == "table" and type(params.message) == "string" and (params.type or 4) <= 2 then
    local note = params.message:match("^lsp%-agent: (inline completion .*)")
    if note then
      log.warn("%s", note)
    end
  end
end

--- `:checkhealth lsp_agent`: whether ghost text and next edits are on for the folder (the
--- server's `initialize` answer, `capabilities`) and who draws the ghost text.
function M.health(health, capabilities)
  health.start("lsp-agent: inline completion and next edits")
  if options().enabled == false then
    return health.info("off in setup() (completion.enabled = false)")
  end
  if type(capabilities) ~= "table" or not capabilities.inlineCompletionProvider then
    return health.info(
      "off for this folder: the server offers no inline completion (it spends tokens, so it is off"
        .. " until lsp-agent's config sets completion.enabled and agents.completion.model)"
    )
  end
  if M.use_builtin() then
    health.ok("ghost text on: Neovim's own vim.lsp.inline_completion draws it")
  else
    health.ok("ghost text on: the plugin draws it (Neovim 0.11; 0.12's own client where present)")
  end
  local accept = (config.options.keymaps.completion or {}).accept
  health.info("accept: " .. (accept or "no key (keymaps.completion.accept = false)"))
  if (config.options.next_edit or {}).enabled == false then
    health.info("next edits: off in setup() (next_edit.enabled = false)")
  else
    health.ok("next edits on: asked after an edit pauses; jump/accept with " .. tostring((config.options.keymaps.next_edit or {}).accept))
  end
end

--- Follow the lsp_agent client into the buffers it attaches to.
function M.setup()
  vim.api.nvim_create_autocmd("LspAttach", {
    group = vim.api.nvim_create_augroup("lsp_agent_completion_attach", { clear = true }),
    callback = function(args)
      local client = vim.lsp.get_client_by_id(args.data.client_id)
      if client and client.name == require("lsp_agent.client").NAME then
        M.attach(client, args.buf)
        require("lsp_agent.next_edit").attach(client, args.buf)
      end
    end,
  })
  vim.api.nvim_create_autocmd("LspDetach", {
    group = "lsp_agent_completion_attach",
    callback = function(args)
      local client = vim.lsp.get_client_by_id(args.data.client_id)
      if client and client.name == require("lsp_agent.client").NAME then
        M.detach(args.buf)
        require("lsp_agent.next_edit").detach(args.buf)
      end
    end,
  })
end

return M
