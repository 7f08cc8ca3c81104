--- `:checkhealth lsp_agent`: Neovim, the server command, whether the server starts, the
--- model and its provider key (only whether it is set — never its value).
local M = {}

--- Read one LSP message (`id` = 1) from a server's stdout text, if complete.
local function parse_response(out)
  local header_end = out:find("\r\n\r\n", 1, true)
  while header_end do
    local length = tonumber(out:sub(1, header_end):match("Content%-Length: (%d+)"))
    if not length then
      return nil
    end
    local body = out:sub(header_end + 4, header_end + 3 + length)
    if #body < length then
      return nil
    end
    local ok, message = pcall(vim.json.decode, body)
    if ok and type(message) == "table" and message.id == 1 then
      return message
    end
    out = out:sub(header_end + 4 + length)
    header_end = out:find("\r\n\r\n", 1, true)
  end
end

local function frame(message)
  local body = vim.json.encode(message)
  return ("Content-Length: %d\r\n\r\n%s"):format(#body, body)
end

--- Start the server, send `initialize`, read the answer, shut it down.
--- @return table? result, string? error
function M.probe(cmd, env, root, timeout)
  local out, err = "", ""
  local ok, proc = pcall(vim.system, cmd, {
    stdin = true,
    env = env,
    cwd = root,
    stdout = function(_, data)
      if data then
        out = out .. data
      end
    end,
    stderr = function(_, data)
      if data then
        err = err .. data
      end
    end,
  })
  if not ok then
    return nil, tostring(proc)
  end
  local name = vim.fn.fnamemodify(root, ":t")
  proc:write(frame({
    jsonrpc = "2.0",
    id = 1,
    method = "initialize",
    params = {
      processId = vim.uv.os_getpid(),
      rootUri = vim.uri_from_fname(root),
      workspaceFolders = { { uri = vim.uri_from_fname(root), name = name } },
      capabilities = vim.empty_dict(),
      initializationOptions = { agent = require("lsp_agent.config").agent_init_options() },
    },
  }))
  local exited = false
  local answer
  vim.wait(timeout, function()
    answer = parse_response(out)
    if not answer then
      exited = proc:is_closing()
    end
    return answer ~= nil or exited
  end, 20)
  if answer then
    pcall(proc.write, proc, frame({ jsonrpc = "2.0", id = 2, method = "shutdown" }))
    pcall(proc.write, proc, frame({ jsonrpc = "2.0", method = "exit" }))
    pcall(proc.write, proc, nil)
  end
  local done = pcall(proc.wait, proc, 3000)
  if not done or not proc:is_closing() then
    pcall(proc.kill, proc, 15)
  end
  if not answer then
    local tail = vim.trim(err):sub(-600)
    if exited then
      return nil, "it exited before answering initialize" .. (tail ~= "" and (":\n" .. tail) or "")
    end
    return nil, ("no answer to initialize within %d ms"):format(timeout) .. (tail ~= "" and (":\n" .. tail) or "")
  end
  if answer.error then
    return nil, ("initialize failed: %s"):format(vim.inspect(answer.error.message or answer.error))
  end
  return answer.result, nil
end

--- `lsp-agent doctor` in place of `serve` at the end of the server command, if it is there.
function M.doctor_cmd(cmd)
  local copy = vim.deepcopy(cmd)
  if copy[#copy] == "--stdio" then
    table.remove(copy)
  end
  if copy[#copy] ~= "serve" then
    return nil
  end
  copy[#copy] = "doctor"
  return copy
end

function M.check()
  local health = vim.health
  local config = require("lsp_agent.config")
  local options = config.options

  health.start("lsp-agent: Neovim")
  local version = vim.version()
  local shown = ("%d.%d.%d"):format(version.major, version.minor, version.patch)
  if vim.fn.has("nvim-0.11") == 1 then
    health.ok("Neovim " .. shown)
  else
    health.error("Neovim " .. shown .. " is too old", { "lsp-agent needs Neovim 0.11 or newer" })
  end
  if require("lsp_agent").did_setup then
    health.ok("setup() was called")
  else
    health.info("setup() was not called: the defaults are used")
  end

  health.start("lsp-agent: server")
  local cmd = options.cmd
  if type(cmd) == "function" then
    health.info("cmd is a function: the server cannot be checked from here")
    return
  end
  local executable = cmd[1]
  local path = vim.fn.exepath(executable)
  if path == "" then
    health.error(("server command not found: %s"):format(executable), {
      "put lsp-agent on $PATH: in the lsp-agent folder, `scripts/install`, `pipx install .` or `uv tool install .` (see its README)",
      'or give its command: require("lsp_agent").setup({ cmd = { "/path/to/lsp-agent", "serve" } })',
    })
    return
  end
  health.ok(("server command: %s (%s)"):format(table.concat(cmd, " "), path))

  local root = require("lsp_agent.client").root_for(vim.api.nvim_get_current_buf())
  local result, err = M.probe(cmd, options.cmd_env, root, 20000)
  if not result then
    health.error("the server does not start: " .. err, { "run the command in a terminal to see why", ":LspAgent log" })
    return
  end
  local info = result.serverInfo or {}
  local agent = (result.capabilities and result.capabilities.experimental or {}).agent
  health.ok(("the server starts: %s %s"):format(info.name or "?", info.version or ""))
  if type(agent) == "table" then
    health.ok(("protocol version %s; commands: %s"):format(
      tostring(agent.protocolVersion),
      #(agent.commands or {}) > 0 and table.concat(agent.commands, ", ") or "none (fix/ask/explain run as prompts; undo/redo unavailable)"
    ))
  else
    health.error("the server does not speak the agent protocol (no capabilities.experimental.agent)")
  end
  local running = require("lsp_agent.client").clients()
  health.info(("%d client(s) running"):format(#running))
  require("lsp_agent.completion").health(health, result.capabilities)

  health.start("lsp-agent: model and provider key")
  local doctor = M.doctor_cmd(cmd)
  if not doctor then
    health.info("the server command does not end in `serve`: cannot run `lsp-agent doctor`")
    return
  end
  local env = vim.deepcopy(options.cmd_env or {})
  if options.model then
    env.LSP_AGENT_MODEL = options.model
  end
  local ok, run = pcall(function()
    return vim.system(doctor, { env = env, cwd = root, text = true }):wait(20000)
  end)
  if not ok or not run or not run.stdout then
    health.warn("could not run " .. table.concat(doctor, " "))
    return
  end
  local found = false
  for _, line in ipairs(vim.split(run.stdout, "\n", { trimempty = true })) do
    local level, name, detail = line:match("^(%S+)%s+([%w ]+): (.*)$")
    if name == "model" or name == "api key" or name == "config" then
      found = true
      -- doctor names the key's variable, never its value
      local label = name == "api key" and "provider key" or name
      if level == "ok" then
        health.ok(label .. ": " .. detail)
      elseif level == "warn" then
        health.error(label .. ": " .. detail, { "set it in the environment Neovim starts the server with (or cmd_env)" })
      else
        health.error(label .. ": " .. detail)
      end
    end
  end
  if not found then
    health.warn("`lsp-agent doctor` printed no model or key check")
  end
end

return M
