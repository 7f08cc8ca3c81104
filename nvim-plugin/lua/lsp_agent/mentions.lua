--- Mentions in the prompt area: `@file` and `@symbol` (a `resource_link`, with the symbol's
--- range), `#diagnostics`, `#selection`, `#buffers`, `#diff` (a `mention` block). Completed by
--- the prompt buffer's 'omnifunc' (typing `@` or `#` at the start of a word opens it; <C-x><C-o>
--- anywhere): workspace files fuzzy-matched (`git ls-files`, else `rg --files`, else a walk;
--- git and rg taken from outside the workspace, run without our environment and with the
--- project's program-running git settings off)
--- and, from two characters on, workspace symbols of your language servers (asked without
--- waiting; the menu opens again with them when they arrive). The text keeps the mention as written; the
--- blocks follow it, and the server puts the content in at send time.
local log = require("lsp_agent.log")
local util = require("lsp_agent.util")

local M = {}

--- `#name` -> what it stands for (the completion menu's words).
M.NAMES = {
  diagnostics = "the workspace's diagnostics",
  ["diagnostics:file"] = "the active file's diagnostics",
  selection = "the selection",
  buffers = "the open files",
  diff = "the working tree's git diff",
}

M.MAX_FILES = 20000
M.MAX_ITEMS = 100
--- How long the file list of a folder is reused, and the wait for workspace symbols (ms).
M.CACHE_MS = 5000

local cache = {}

--- Whether `path` is `folder` or lies in it.
local function inside(path, folder)
  return path == folder or path:sub(1, #folder + 1) == folder .. "/"
end

--- Whether a path lies in `root` (as written or with its links followed).
local function avoider(root)
  local roots = { vim.fs.normalize(root), vim.uv.fs_realpath(root) or root }
  return function(path)
    return inside(path, roots[1]) or inside(path, roots[2])
  end
end

--- The absolute PATH entries outside `root`.
local function trusted_path(root)
  local avoided, kept = avoider(root), {}
  for entry in vim.gsplit(vim.env.PATH or "", ":", { plain = true }) do
    if entry:sub(1, 1) == "/" and not avoided(vim.fs.normalize(entry)) then
      table.insert(kept, entry)
    end
  end
  return kept
end

--- `name` on PATH, from an absolute entry outside `root` whose file's real path is outside it
--- too: an activated `.venv/bin` in the project could hold a planted `git` or `rg`.
function M.program(name, root)
  local avoided = avoider(root)
  for _, entry in ipairs(trusted_path(root)) do
    local candidate = entry .. "/" .. name
    local real = vim.uv.fs_realpath(candidate)
    if real and not avoided(real) and vim.fn.executable(candidate) == 1 then
      return candidate
    end
  end
  return nil
end

--- The whole environment of a helper: no key of ours, no user or system git configuration.
local function helper_env(root)
  M.empty_home = M.empty_home or vim.fn.tempname()
  vim.fn.mkdir(M.empty_home, "p")
  local path = table.concat(trusted_path(root), ":")
  return {
    PATH = path ~= "" and path or "/usr/bin:/bin",
    HOME = M.empty_home,
    XDG_CONFIG_HOME = M.empty_home,
    LC_ALL = "C",
    GIT_CONFIG_NOSYSTEM = "1",
    GIT_CONFIG_GLOBAL = "/dev/null",
    GIT_TERMINAL_PROMPT = "0",
    GIT_OPTIONAL_LOCKS = "0",
  }
end

--- git with every configuration key that could start a program of the project off.
M.GIT_SAFE = {
  "--no-pager",
  "-c", "core.fsmonitor=false",
  "-c", "core.untrackedCache=false",
  "-c", "core.hooksPath=/dev/null",
  "-c", "core.pager=cat",
  "-c", "credential.helper=",
  "-c", "protocol.allow=never",
}

local function run(cmd, cwd)
  if not cmd[1] then
    return nil
  end
  local opts = { cwd = cwd, text = true, env = helper_env(cwd), clear_env = true }
  local ok, proc = pcall(vim.system, cmd, opts)
  if not ok then
    return nil
  end
  local result = proc:wait(3000)
  if result.code ~= 0 or not result.stdout then
    return nil
  end
  return vim.split(result.stdout, "\n", { trimempty = true })
end

--- A bounded walk of `root`, for folders that are neither git repositories nor have rg.
local function walk(root)
  local files = {}
  local skip = { [".git"] = true, node_modules = true, [".venv"] = true, __pycache__ = true }
  for name, kind in vim.fs.dir(root, {
    depth = 8,
    skip = function(dir)
      return not skip[vim.fs.basename(dir)]
    end,
  }) do
    if kind == "file" then
      table.insert(files, name)
      if #files >= M.MAX_FILES then
        break
      end
    end
  end
  return files
end

--- The workspace's files, relative to `root`, ignored files left out.
function M.files(root)
  local hit = cache[root]
  local now = vim.uv.now()
  if hit and now - hit.time < M.CACHE_MS then
    return hit.files
  end
  local git = M.program("git", root)
  local list = { "ls-files", "--cached", "--others", "--exclude-standard" }
  local files = git and run(vim.list_extend({ git, unpack(M.GIT_SAFE) }, list), root)
  local rg = M.program("rg", root)
  if not files and rg then
    files = run({ rg, "--no-config", "--files" }, root)
  end
  files = files or walk(root)
  if #files > M.MAX_FILES then
    files = vim.list_slice(files, 1, M.MAX_FILES)
  end
  cache[root] = { time = now, files = files }
  return files
end

--- The workspace folder the prompt's paths are relative to.
function M.root()
  local client = require("lsp_agent.client").get(require("lsp_agent.session").current)
  local folder = client and client.workspace_folders and client.workspace_folders[1]
  if folder then
    return vim.uri_to_fname(folder.uri)
  end
  return client and client.root_dir or vim.fn.getcwd()
end

--- The workspace symbols of each query asked: { time, symbols? } (nil while asked).
local symbol_cache = {}

--- The workspace symbols matching `query` known now (nil until the servers answered), and
--- `on_ready()` once they have, when they had to be asked: the language servers other than
--- lsp-agent, asynchronously (a completion function must not wait: it runs under textlock).
function M.symbols(query, on_ready)
  local hit = symbol_cache[query]
  if hit and vim.uv.now() - hit.time < M.CACHE_MS then
    return hit.symbols
  end
  local clients = require("lsp_agent.editor_query").other_clients(nil, "workspace/symbol")
  if #clients == 0 then
    return {}
  end
  local entry = { time = vim.uv.now() }
  symbol_cache[query] = entry
  local symbols, pending = {}, #clients
  local function finish()
    pending = pending - 1
    if pending == 0 then
      entry.symbols = symbols
      if on_ready then
        vim.schedule(on_ready)
      end
    end
  end
  for _, client in ipairs(clients) do
    local ok = client:request("workspace/symbol", { query = query }, function(err, result)
      if not err and type(util.nn(result)) == "table" then
        vim.list_extend(symbols, result)
      end
      finish()
    end)
    if not ok then
      finish()
    end
  end
  return nil
end

local SYMBOL_KINDS = {}
for name, number in pairs(vim.lsp.protocol.SymbolKind) do
  if type(name) == "string" and type(number) == "number" then
    SYMBOL_KINDS[number] = name
  end
end

--- Completion items for `base` ("@que" or "#di"); `on_symbols()` is called when the workspace
--- symbols were not known yet and now are (the menu is opened again to show them).
function M.items(base, root, on_symbols)
  local items = {}
  local sigil, query = base:sub(1, 1), base:sub(2)
  if sigil == "#" then
    local names = vim.tbl_keys(M.NAMES)
    table.sort(names)
    if query ~= "" then
      names = vim.fn.matchfuzzy(names, query)
    end
    for _, name in ipairs(names) do
      table.insert(items, { word = "#" .. name, menu = M.NAMES[name], kind = "m" })
    end
    return items
  end
  if sigil ~= "@" then
    return items
  end
  local files = M.files(root)
  local matched = query == "" and vim.list_slice(files, 1, M.MAX_ITEMS) or vim.fn.matchfuzzy(files, query, { limit = M.MAX_ITEMS })
  for _, path in ipairs(matched) do
    table.insert(items, { word = "@" .. path, menu = "file", kind = "f" })
  end
  if #query >= 2 then
    for _, symbol in ipairs(M.symbols(query, on_symbols) or {}) do
      local location = symbol.location or {}
      if location.uri and location.range then
        local where = util.display_path(location.uri) .. ":" .. (location.range.start.line + 1)
        table.insert(items, {
          word = "@" .. symbol.name,
          menu = ("%s %s"):format(SYMBOL_KINDS[symbol.kind] or "symbol", where),
          kind = "s",
          user_data = { uri = location.uri, range = location.range },
        })
      end
    end
  end
  return items
end

--- Where the mention under the cursor starts (0-based byte column), or nil.
local function mention_start(line, col)
  local before = line:sub(1, col)
  local start = before:match("()[@#][^%s@#]*$")
  if start and (start == 1 or before:sub(start - 1, start - 1):match("%s")) then
    return start - 1
  end
end

--- 'omnifunc' of the prompt area.
function M.omnifunc(findstart, base)
  if findstart == 1 then
    local line = vim.api.nvim_get_current_line()
    local col = vim.api.nvim_win_get_cursor(0)[2]
    return mention_start(line, col) or -3
  end
  local bufnr = vim.api.nvim_get_current_buf()
  local function reopen()
    -- the symbols arrived: complete again if the user is still at that mention
    if vim.api.nvim_get_current_buf() ~= bufnr or vim.fn.mode() ~= "i" then
      return
    end
    local line = vim.api.nvim_get_current_line()
    local col = vim.api.nvim_win_get_cursor(0)[2]
    local start = mention_start(line, col)
    if start and line:sub(start + 1, col) == base then
      vim.api.nvim_feedkeys(vim.keycode("<C-x><C-o>"), "n", false)
    end
  end
  local ok, items = pcall(M.items, base, M.root(), reopen)
  if not ok then
    log.warn("mention completion failed: %s", items)
    return {}
  end
  return items
end

--- The insert-mode `@` / `#` mapping's keys: the character, then the completion when it
--- starts a word.
function M.trigger(char)
  local line = vim.api.nvim_get_current_line()
  local col = vim.api.nvim_win_get_cursor(0)[2]
  if col == 0 or line:sub(col, col):match("%s") then
    return char .. "<C-x><C-o>"
  end
  return char
end

--- Remember the symbols completed in `bufnr` (their uri and range): the text only has the
--- name. `symbols` is the table the prompt's mentions are resolved from.
function M.attach(bufnr, symbols)
  vim.bo[bufnr].omnifunc = "v:lua.require'lsp_agent.mentions'.omnifunc"
  vim.bo[bufnr].completeopt = "menuone,noinsert,noselect,fuzzy"
  for _, char in ipairs({ "@", "#" }) do
    vim.keymap.set("i", char, function()
      return M.trigger(char)
    end, { buffer = bufnr, expr = true, desc = "lsp-agent: complete a mention" })
  end
  vim.api.nvim_create_autocmd("CompleteDone", {
    buffer = bufnr,
    callback = function()
      local item = vim.v.completed_item or {}
      local data = item.user_data
      if type(data) == "table" and data.uri and type(item.word) == "string" then
        symbols[item.word] = { uri = data.uri, range = data.range }
      end
    end,
  })
end

--- The blocks of the mentions in `text`: { blocks = ContentBlock[], selection = bool }.
--- `symbols`: completed symbols by their word; `root`: the folder of relative paths;
--- `active_uri`: the active file (`#diagnostics:file`).
function M.parse(text, symbols, root, active_uri)
  local blocks, seen, wants_selection = {}, {}, false
  local function add(key, block)
    if not seen[key] then
      seen[key] = true
      table.insert(blocks, block)
    end
  end
  for word in (" " .. text):gmatch("%s([@#][^%s]+)") do
    word = word:gsub("[%.,;:!%?%)%]]+$", "")
    local sigil, name = word:sub(1, 1), word:sub(2)
    if sigil == "@" and name ~= "" then
      local symbol = symbols and symbols[word]
      if symbol then
        add(word, { type = "resource_link", uri = symbol.uri, range = symbol.range })
      else
        local path = vim.fs.normalize(name)
        if not path:match("^/") then
          path = vim.fs.joinpath(root, path)
        end
        if vim.fn.filereadable(path) == 1 then
          local uri = vim.uri_from_fname(vim.fs.abspath(path))
          add(uri, { type = "resource_link", uri = uri })
        end
      end
    elseif sigil == "#" then
      if name == "diagnostics:file" then
        if active_uri then
          add(word, { type = "mention", name = "diagnostics", uri = active_uri })
        end
      elseif M.NAMES[name] then
        add(word, { type = "mention", name = name })
        wants_selection = wants_selection or name == "selection"
      end
    end
  end
  return { blocks = blocks, selection = wants_selection }
end

return M
