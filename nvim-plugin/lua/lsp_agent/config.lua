--- Options of `require("lsp_agent").setup(opts)`: defaults and validation.
local M = {}

M.VERSION = "0.1.0"

--- @class lsp_agent.Options
M.defaults = {
  --- The server command (`vim.lsp.ClientConfig.cmd`).
  cmd = { "lsp-agent", "serve" },
  --- Extra environment for the server process.
  cmd_env = nil,
  --- `provider/model` for new sessions (sent as initializationOptions.agent.config.model).
  model = nil,
  --- "build" or "plan" (initializationOptions.agent.config.mode).
  mode = nil,
  --- More settings for the server, with the config file's snake_case keys.
  server_config = nil,
  --- Markers of the workspace folder; the current directory when none is found.
  root_markers = { ".git", ".hg", ".jj", "pyproject.toml", "package.json", "Cargo.toml", "go.mod" },
  --- Start the server for file buffers (`vim.lsp.enable("lsp_agent")`).
  autostart = true,
  --- Send every buffer's diagnostics to the agent (`agent/diagnostics`).
  forward_diagnostics = true,
  --- Milliseconds to wait after the last DiagnosticChanged before forwarding.
  diagnostics_debounce = 300,
  --- Send the focus with each prompt: the active file, the cursor and the selection (with
  --- its text), shown as a chip above the prompt area (`keymaps.prompt.focus` removes it).
  send_focus = true,
  --- Answer the agent's questions to your language servers (`agent/editor/query`): its
  --- definition, references, hover, symbols and implementation tools.
  editor_queries = true,
  keymaps = {
    --- Global normal-mode mappings: { chat = "<leader>ac", ask = "<leader>aa", ... }.
    global = {},
    --- In the chat buffer.
    chat = { close = "q", stop = "<C-c>", jump = "<CR>", prompt = "i", retry = "r" },
    --- In the prompt area.
    prompt = { submit = "<CR>", submit_insert = "<C-s>", stop = "<C-c>", close = "q", focus = "<C-f>" },
    --- In the diff tab: closes it (and brings back the permission prompt it came from).
    diff = { close = "q" },
    --- In a buffer with pending hunks (and only there): move between them, keep or undo
    --- the hunk(s) under the cursor or the Visual selection; `comment` asks for a comment on
    --- the hunk under the cursor; `qf_comment` does the same in the review's quickfix window.
    review = { next = "]a", prev = "[a", keep = false, undo = false, comment = false, qf_comment = "c" },
    --- Insert mode, in buffers whose server offers inline completion: accept the ghost text
    --- (otherwise the key does what it did before), hide it.
    completion = { accept = "<Tab>", dismiss = "<C-]>" },
    --- Normal mode, only while a next-edit suggestion is shown: jump to it, then accept it;
    --- reject it (the key keeps its own meaning too).
    next_edit = { accept = "<Tab>", reject = "<Esc>" },
  },
  --- Inline completion (ghost text) where the server offers it (`completion.enabled` in the
  --- folder's lsp-agent config): `enabled = false` never asks; `debounce`: ms after the last
  --- keystroke; `builtin`: on Neovim 0.12+, Neovim's own `vim.lsp.inline_completion`.
  completion = { enabled = true, debounce = 150, builtin = true },
  --- Next-edit suggestions (`agent/nextEdit`) from the same servers: `debounce`: ms after the
  --- last edit (yours or the agent's); `sign`: in the sign column of the suggestion's line.
  next_edit = { enabled = true, debounce = 600, sign = "➜" },
  --- Pending changes: signs in the sign column of the buffers that have pending hunks.
  review = { signs = true, sign = "▎", sign_deleted = "▁" },
  window = {
    --- "vertical", "horizontal", "tab" or "float".
    layout = "vertical",
    --- "right" or "left" (vertical), "bottom" or "top" (horizontal).
    position = "right",
    --- Width (vertical) or height (horizontal): a fraction of the editor below 1, or cells.
    size = 0.4,
    --- Lines of the prompt area below the chat.
    prompt_height = 5,
    --- The float's size (fractions) and border.
    float = { width = 0.8, height = 0.8, border = "rounded" },
  },
  --- Close the diff tab once the permission is answered.
  diff_close_on_answer = true,
}

--- In the chat buffer: opens the code reference under the cursor (`src/a.py:12`, links.lua).
M.defaults.keymaps.chat.follow = "gf"

local ENUMS = {
  mode = require("lsp_agent.protocol").modes,
  ["window.layout"] = { "vertical", "horizontal", "tab", "float" },
  ["window.position"] = { "right", "left", "bottom", "top" },
}

local GLOBAL_ACTIONS = {
  "chat",
  "ask",
  "fix",
  "explain",
  "stop",
  "retry",
  "undo",
  "redo",
  "sessions",
  "resume",
  "model",
  "mode",
  "diff",
  "permission",
  "allow",
  "review",
  "keep",
  "undo_hunk",
  "rewind",
  "compact",
  "log",
}
M.GLOBAL_ACTIONS = GLOBAL_ACTIONS

--- The options in effect.
M.options = vim.deepcopy(M.defaults)

local function fail(path, message)
  error(("lsp_agent.setup: %s: %s"):format(path, message), 0)
end

--- `server_config.permission`: the last matching rule wins, but a Lua table has no order, so
--- a map of patterns with different actions would reach the server in any order (a deny
--- after an allow one day, before it the next). Such rules must be a list of maps.
local function check_permission_order(server_config)
  local permission = type(server_config) == "table" and server_config.permission or nil
  if type(permission) ~= "table" then
    return
  end
  for name, rules in pairs(permission) do
    if type(rules) == "table" and not vim.islist(rules) then
      local actions = {}
      for _, action in pairs(rules) do
        actions[action] = true
      end
      if vim.tbl_count(actions) > 1 then
        fail(
          ("server_config.permission.%s"):format(name),
          "a Lua table has no order and the last matching rule wins: write the rules as a list, e.g. "
            .. "{ { ['*'] = 'ask' }, { ['curl *'] = 'deny' } }"
        )
      end
    end
  end
end

local function is_key(value)
  return value == false or type(value) == "string"
end

--- Every top-level option, including those whose default is nil.
local TOP_LEVEL = {
  "cmd",
  "cmd_env",
  "model",
  "mode",
  "server_config",
  "root_markers",
  "autostart",
  "forward_diagnostics",
  "diagnostics_debounce",
  "send_focus",
  "editor_queries",
  "keymaps",
  "window",
  "review",
  "diff_close_on_answer",
  "completion",
  "next_edit",
}

local function check_table(path, value, known)
  if type(value) ~= "table" then
    fail(path, "expected a table, got " .. type(value))
  end
  if not vim.islist(known) then
    known = vim.tbl_keys(known)
  end
  for key in pairs(value) do
    if not vim.list_contains(known, key) then
      local sorted = vim.deepcopy(known)
      table.sort(sorted)
      fail(path .. "." .. tostring(key), "unknown option (known: " .. table.concat(sorted, ", ") .. ")")
    end
  end
end

local function check_enum(path, value)
  local allowed = ENUMS[path]
  if value ~= nil and allowed and not vim.list_contains(allowed, value) then
    fail(path, ("expected one of %s, got %s"):format(table.concat(allowed, ", "), vim.inspect(value)))
  end
end

local function check_keymaps(keymaps)
  if keymaps == nil then
    return
  end
  check_table("keymaps", keymaps, M.defaults.keymaps)
  for section, value in pairs(keymaps) do
    local path = "keymaps." .. section
    if type(value) ~= "table" then
      fail(path, "expected a table, got " .. type(value))
    end
    for name, key in pairs(value) do
      if section == "global" then
        if not vim.list_contains(GLOBAL_ACTIONS, name) then
          fail(path .. "." .. tostring(name), "unknown action (known: " .. table.concat(GLOBAL_ACTIONS, ", ") .. ")")
        end
      elseif M.defaults.keymaps[section][name] == nil then
        local known = vim.tbl_keys(M.defaults.keymaps[section])
        table.sort(known)
        fail(path .. "." .. tostring(name), "unknown key (known: " .. table.concat(known, ", ") .. ")")
      end
      if not is_key(key) then
        fail(path .. "." .. tostring(name), "expected a key (string) or false, got " .. type(key))
      end
    end
  end
end

--- Validate `opts` (raises with a message naming the option) and return the merged options.
--- @param opts table|nil
--- @return lsp_agent.Options
function M.validate(opts)
  opts = opts or {}
  check_table("opts", opts, TOP_LEVEL)
  local cmd = opts.cmd
  if cmd ~= nil then
    if type(cmd) == "table" then
      if #cmd == 0 then
        fail("cmd", "must not be empty")
      end
      for i, part in ipairs(cmd) do
        if type(part) ~= "string" then
          fail(("cmd[%d]"):format(i), "expected a string, got " .. type(part))
        end
      end
    elseif type(cmd) ~= "function" then
      fail("cmd", "expected a list of strings or a function, got " .. type(cmd))
    end
  end
  local simple = {
    cmd_env = "table",
    model = "string",
    mode = "string",
    server_config = "table",
    root_markers = "table",
    autostart = "boolean",
    forward_diagnostics = "boolean",
    diagnostics_debounce = "number",
    send_focus = "boolean",
    editor_queries = "boolean",
    diff_close_on_answer = "boolean",
  }
  for key, kind in pairs(simple) do
    if opts[key] ~= nil and type(opts[key]) ~= kind then
      fail(key, ("expected a %s, got %s"):format(kind, type(opts[key])))
    end
  end
  if opts.model ~= nil and not opts.model:find("/", 1, true) then
    fail("model", "expected provider/model, e.g. anthropic/claude-sonnet-4-5, got " .. vim.inspect(opts.model))
  end
  check_enum("mode", opts.mode)
  if opts.diagnostics_debounce ~= nil and opts.diagnostics_debounce < 0 then
    fail("diagnostics_debounce", "must not be negative")
  end
  check_permission_order(opts.server_config)
  check_keymaps(opts.keymaps)
  if opts.review ~= nil then
    check_table("review", opts.review, M.defaults.review)
    local r = opts.review
    if r.signs ~= nil and type(r.signs) ~= "boolean" then
      fail("review.signs", "expected a boolean, got " .. type(r.signs))
    end
    for _, key in ipairs({ "sign", "sign_deleted" }) do
      local text = r[key]
      if text ~= nil and (type(text) ~= "string" or vim.fn.strdisplaywidth(text) < 1 or vim.fn.strdisplaywidth(text) > 2) then
        fail("review." .. key, "expected one or two cells of text, got " .. vim.inspect(text))
      end
    end
  end
  for _, section in ipairs({ "completion", "next_edit" }) do
    local value = opts[section]
    if value ~= nil then
      check_table(section, value, M.defaults[section])
      if value.enabled ~= nil and type(value.enabled) ~= "boolean" then
        fail(section .. ".enabled", "expected a boolean, got " .. type(value.enabled))
      end
      if value.builtin ~= nil and type(value.builtin) ~= "boolean" then
        fail(section .. ".builtin", "expected a boolean, got " .. type(value.builtin))
      end
      if value.debounce ~= nil and (type(value.debounce) ~= "number" or value.debounce < 0) then
        fail(section .. ".debounce", "expected a number of milliseconds, got " .. vim.inspect(value.debounce))
      end
      local sign = value.sign
      if sign ~= nil and (type(sign) ~= "string" or vim.fn.strdisplaywidth(sign) < 1 or vim.fn.strdisplaywidth(sign) > 2) then
        fail(section .. ".sign", "expected one or two cells of text, got " .. vim.inspect(sign))
      end
    end
  end
  if opts.window ~= nil then
    check_table("window", opts.window, M.defaults.window)
    local w = opts.window
    check_enum("window.layout", w.layout)
    check_enum("window.position", w.position)
    for _, key in ipairs({ "size", "prompt_height" }) do
      if w[key] ~= nil and (type(w[key]) ~= "number" or w[key] <= 0) then
        fail("window." .. key, "expected a positive number, got " .. vim.inspect(w[key]))
      end
    end
    if w.float ~= nil then
      check_table("window.float", w.float, M.defaults.window.float)
    end
  end
  local merged = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts)
  -- Lists and maps the user gives replace the defaults instead of merging into them.
  for _, key in ipairs({ "cmd", "root_markers", "cmd_env", "server_config" }) do
    if opts[key] ~= nil then
      merged[key] = opts[key]
    end
  end
  return merged
end

--- Validate and apply.
function M.set(opts)
  M.options = M.validate(opts)
  return M.options
end

--- `initializationOptions.agent` (protocol.md §0).
function M.agent_init_options(options)
  options = options or M.options
  local agent = {
    protocolVersion = 1,
    ui = { chat = true, diff = true, permissions = true, questions = true, plan = true },
    forwardsDiagnostics = options.forward_diagnostics,
    clientInfo = { name = "lsp-agent.nvim", version = M.VERSION },
    editorQueries = options.editor_queries and vim.deepcopy(require("lsp_agent.editor_query").KINDS) or {},
    savesDocuments = true, -- lsp_agent.save
  }
  local server_config = vim.deepcopy(options.server_config or {})
  if options.model then
    server_config.model = options.model
  end
  if options.mode then
    server_config.mode = options.mode
  end
  if next(server_config) ~= nil then
    agent.config = server_config
  end
  return agent
end

return M
