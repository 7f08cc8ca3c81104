--- `:LspAgent commit`: the agent writes a message for the staged changes
--- (`agent/commitMessage`, in the repository's style) into a commit buffer, as git's own
--- COMMIT_EDITMSG would be: edit it, `:w` commits the staged changes with it (lines starting
--- with `#` left out, as git does), `:q!` gives up. The commit is yours: `git commit` runs
--- in the repository as you would run it, hooks included.
local client_mod = require("lsp_agent.client")
local log = require("lsp_agent.log")
local protocol = require("lsp_agent.protocol")

local M = {}

M.HELP = {
  "# The agent's message for the staged changes. :w commits them with it,",
  "# :q! leaves without committing. Lines starting with '#' are left out.",
}

--- The top folder of the repository `folder` is in, or nil.
local function toplevel(folder)
  local done = vim.system({ "git", "rev-parse", "--show-toplevel" }, { cwd = folder, text = true }):wait()
  if done.code ~= 0 then
    return nil
  end
  return vim.trim(done.stdout)
end

--- Commit the buffer's text in `root`; true when git did.
local function commit(bufnr, root)
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  local file = vim.fn.tempname()
  vim.fn.writefile(lines, file)
  local done = vim.system({ "git", "commit", "--cleanup=strip", "-F", file }, { cwd = root, text = true }):wait()
  vim.fn.delete(file)
  if done.code ~= 0 then
    log.warn("git commit failed: %s", vim.trim((done.stderr or "") .. (done.stdout or "")))
    return false
  end
  log.notify("%s", vim.trim(done.stdout or ""):match("^[^\n]*"))
  return true
end

--- Open the commit buffer for `root` holding `message`.
function M.open(root, message)
  local name = "lsp-agent://commit/" .. root
  local existing = vim.fn.bufnr(name)
  if existing ~= -1 then
    vim.api.nvim_buf_delete(existing, { force = true })
  end
  vim.cmd("botright new")
  local bufnr = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_name(bufnr, name)
  vim.bo[bufnr].buftype = "acwrite"
  vim.bo[bufnr].bufhidden = "wipe"
  vim.bo[bufnr].swapfile = false
  local lines = vim.split(message, "\n", { plain = true })
  table.insert(lines, "")
  vim.list_extend(lines, M.HELP)
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  vim.bo[bufnr].filetype = "gitcommit"
  vim.bo[bufnr].modified = false
  vim.api.nvim_create_autocmd("BufWriteCmd", {
    buffer = bufnr,
    callback = function()
      if commit(bufnr, root) then
        vim.bo[bufnr].modified = false
        vim.schedule(function()
          if vim.api.nvim_buf_is_valid(bufnr) then
            vim.api.nvim_buf_delete(bufnr, { force = true })
          end
        end)
      end
    end,
  })
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  return bufnr
end

--- `:LspAgent commit`: ask the server, then open the commit buffer. `cb(err, bufnr)`.
function M.run(cb)
  client_mod.with_client(function(client, start_err)
    if not client then
      return cb and cb(start_err)
    end
    local folder_uri = client_mod.folder_uri(client)
    local root = folder_uri and toplevel(vim.uri_to_fname(folder_uri))
    if not root then
      log.warn("not in a git repository")
      return cb and cb("not in a git repository")
    end
    log.notify("writing a commit message for the staged changes…")
    client_mod.request(client, protocol.requests.commit_message, { uri = folder_uri }, function(err, result)
      if err then
        log.warn("no commit message: %s", err.message or client_mod.describe_error(err))
        return cb and cb(err)
      end
      local bufnr = M.open(root, result.message)
      if cb then
        cb(nil, bufnr)
      end
    end, true)
  end)
end

return M
