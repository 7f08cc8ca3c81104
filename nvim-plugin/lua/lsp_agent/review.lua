--- Pending changes (protocol.md "Review"): every hunk the agent changed waits for keep or
--- undo. The list of each session comes from `agent/review/list` (fetched again after every
--- `review_update`) and is shown three ways: the quickfix list (`:LspAgent review`), signs in
--- the buffers that have pending hunks, and `]a` / `[a` between them. `:LspAgent keep` /
--- `:LspAgent undo-hunk` resolve the hunks a range covers; an undo lands through the server's
--- `workspace/applyEdit`, so it is one undo step of the buffer and `u` takes it back.
---
--- Signs are extmarks: they follow the user's own edits until the next fetch places them
--- again from the server's ranges.
local client_mod = require("lsp_agent.client")
local config = require("lsp_agent.config")
local log = require("lsp_agent.log")
local protocol = require("lsp_agent.protocol")
local session = require("lsp_agent.session")
local util = require("lsp_agent.util")

local M = {}

M.ns = vim.api.nvim_create_namespace("lsp_agent_review")
M.QF_TITLE = "lsp-agent: pending changes"

--- The last fetched list of each session: session id -> files (`agent/review/list` result).
M.lists = {}
--- The hunks behind the signs: bufnr -> extmark id -> hunk (with `sessionId` and `uri`).
M.marks = {}
--- The quickfix list `:LspAgent review` made (its id) and the session it shows.
M.qf = nil

local generation = {}
local mapped = {}

vim.api.nvim_set_hl(0, "LspAgentReviewSign", { default = true, link = "DiffChange" })
vim.api.nvim_set_hl(0, "LspAgentReviewSignDelete", { default = true, link = "DiffDelete" })

-- the list ------------------------------------------------------------------------------------

--- The pending hunks of a session, in the server's order (files first changed first).
function M.pending(session_id)
  local hunks = {}
  for _, file in ipairs(M.lists[session_id] or {}) do
    for _, hunk in ipairs(file.hunks or {}) do
      if hunk.status == "pending" then
        table.insert(hunks, vim.tbl_extend("force", hunk, { uri = file.uri, sessionId = session_id }))
      end
    end
  end
  return hunks
end

local function count_lines(text)
  if not text or text == "" then
    return 0
  end
  local _, newlines = text:gsub("\n", "")
  return text:sub(-1) == "\n" and newlines or newlines + 1
end

local function first_line(text)
  return (vim.trim((text or ""):match("^[^\n]*") or ""))
end

--- One quickfix entry per pending hunk: where it is and what it is.
function M.qf_items(session_id)
  local items = {}
  for _, hunk in ipairs(M.pending(session_id)) do
    local range = util.nn(hunk.range)
    local added, removed = count_lines(hunk.newText), count_lines(hunk.oldText)
    local what = added == 0 and ("deleted: " .. first_line(hunk.oldText)) or first_line(hunk.newText)
    local text = ("+%d -%d  %s"):format(added, removed, what)
    if not range then
      text = text .. "  (changed since: no longer found)"
    end
    local lnum = range and range.start.line + 1 or 1
    table.insert(items, {
      filename = vim.uri_to_fname(hunk.uri),
      lnum = lnum,
      end_lnum = range and math.max(lnum, range["end"].line) or nil,
      col = 1,
      text = text,
      type = range and "" or "W",
      user_data = { hunkId = hunk.hunkId, sessionId = session_id },
    })
  end
  return items
end

local function qf_valid()
  return M.qf and vim.fn.getqflist({ id = M.qf.id }).id == M.qf.id
end

--- `keymaps.review.qf_comment` in the quickfix window's buffer (`qfbuf`, else the list's
--- once it has one).
local function map_qf(qfbuf)
  local key = config.options.keymaps.review.qf_comment
  qfbuf = qfbuf or (key and qf_valid() and vim.fn.getqflist({ id = M.qf.id, qfbufnr = 0 }).qfbufnr) or 0
  if key and qfbuf ~= 0 and vim.api.nvim_buf_is_valid(qfbuf) then
    vim.keymap.set("n", key, function()
      require("lsp_agent.comments").comment_lines(0)
    end, { buffer = qfbuf, desc = "lsp-agent: comment on the hunk (sent with your next prompt)" })
  end
end

local function refresh_qf(session_id)
  if not qf_valid() or M.qf.session_id ~= session_id then
    return
  end
  map_qf(nil)
  local items = M.qf_items(session_id)
  vim.fn.setqflist({}, "r", { id = M.qf.id, items = items, title = ("%s (%d)"):format(M.QF_TITLE, #items) })
end

--- Fetch the list of a session again; `cb(err)` once it is in (signs and quickfix redone).
function M.fetch(session_id, cb)
  local client = client_mod.get(session_id)
  if not client then
    if cb then
      cb("the server is not running")
    end
    return
  end
  generation[session_id] = (generation[session_id] or 0) + 1
  local mine = generation[session_id]
  client_mod.request(client, protocol.requests.review_list, { sessionId = session_id }, function(err, result)
    if mine ~= generation[session_id] then
      return cb and cb(err) -- a later fetch is under way: its answer counts
    end
    if not err and result then
      M.lists[session_id] = result.files or {}
      M.place_all()
      refresh_qf(session_id)
    end
    if cb then
      cb(err)
    end
  end, true)
end

-- signs and motions -----------------------------------------------------------------------

local function unmap(bufnr)
  for _, entry in ipairs(mapped[bufnr] or {}) do
    pcall(vim.keymap.del, entry[1], entry[2], { buffer = bufnr })
  end
  mapped[bufnr] = nil
end

local function map(bufnr)
  if mapped[bufnr] then
    return
  end
  mapped[bufnr] = {}
  local keys = config.options.keymaps.review
  local function set(modes, lhs, fn, desc)
    if lhs then
      vim.keymap.set(modes, lhs, fn, { buffer = bufnr, desc = "lsp-agent: " .. desc })
      for _, mode in ipairs(type(modes) == "table" and modes or { modes }) do
        table.insert(mapped[bufnr], { mode, lhs })
      end
    end
  end
  set({ "n", "x", "o" }, keys.next, function()
    M.jump(1, vim.v.count1)
  end, "next pending hunk")
  set({ "n", "x", "o" }, keys.prev, function()
    M.jump(-1, vim.v.count1)
  end, "previous pending hunk")
  local function ranged(action)
    return function()
      local mode = vim.fn.mode()
      local l1, l2
      if mode == "v" or mode == "V" or mode == "\22" then
        l1, l2 = vim.fn.line("v"), vim.fn.line(".")
        vim.api.nvim_feedkeys(vim.keycode("<Esc>"), "nx", false)
      end
      M.resolve_lines(action, bufnr, l1, l2)
    end
  end
  set({ "n", "x" }, keys.keep, ranged("keep"), "keep the pending hunk(s)")
  set({ "n", "x" }, keys.undo, ranged("undo"), "undo the pending hunk(s)")
  set("n", keys.comment, function()
    require("lsp_agent.comments").comment_lines(bufnr)
  end, "comment on the hunk (sent with your next prompt)")
end

--- The 0-based first and last line of a sign's hunk (where the extmark is now).
local function mark_lines(bufnr, id)
  local pos = vim.api.nvim_buf_get_extmark_by_id(bufnr, M.ns, id, { details = true })
  if not pos or not pos[1] then
    return nil
  end
  local last = pos[3] and pos[3].end_row or pos[1]
  return pos[1], math.max(pos[1], last)
end

--- Place the signs of one buffer from the fetched lists (all sessions).
function M.place(bufnr)
  bufnr = bufnr == 0 and vim.api.nvim_get_current_buf() or bufnr
  if not vim.api.nvim_buf_is_loaded(bufnr) or not util.is_file_buffer(bufnr) then
    return
  end
  vim.api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
  M.marks[bufnr] = nil
  local uri = vim.uri_from_bufnr(bufnr)
  local line_count = vim.api.nvim_buf_line_count(bufnr)
  local options = config.options.review
  local marks = {}
  for session_id in pairs(M.lists) do
    for _, hunk in ipairs(M.pending(session_id)) do
      local range = util.nn(hunk.range)
      if hunk.uri == uri and range then
        local start = math.min(range.start.line, line_count - 1)
        local n = range["end"].line - range.start.line
        local opts = { end_row = math.min(start + math.max(n - 1, 0), line_count - 1), end_col = 0, priority = 20 }
        if options.signs then
          opts.sign_text = n == 0 and options.sign_deleted or options.sign
          opts.sign_hl_group = n == 0 and "LspAgentReviewSignDelete" or "LspAgentReviewSign"
        end
        local ok, id = pcall(vim.api.nvim_buf_set_extmark, bufnr, M.ns, start, 0, opts)
        if ok then
          marks[id] = hunk
        end
      end
    end
  end
  if next(marks) then
    M.marks[bufnr] = marks
    map(bufnr)
  else
    unmap(bufnr)
  end
end

function M.place_all()
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) and (M.marks[bufnr] or util.is_file_buffer(bufnr)) then
      M.place(bufnr)
    end
  end
end

--- The pending hunks of `bufnr` whose lines meet lines `l1`..`l2` (1-based), in buffer order.
function M.hunks_in(bufnr, l1, l2)
  bufnr = bufnr == 0 and vim.api.nvim_get_current_buf() or bufnr
  local found = {}
  for id, hunk in pairs(M.marks[bufnr] or {}) do
    local first, last = mark_lines(bufnr, id)
    if first and first + 1 <= l2 and last + 1 >= l1 then
      table.insert(found, { first = first, hunk = hunk })
    end
  end
  table.sort(found, function(a, b)
    return a.first < b.first
  end)
  return vim.tbl_map(function(entry)
    return entry.hunk
  end, found)
end

--- `]a` / `[a`: the cursor to the start of the next (`dir` 1) or previous (-1) pending hunk,
--- `count` times; past the last one it wraps when 'wrapscan' is on.
function M.jump(dir, count)
  local bufnr = vim.api.nvim_get_current_buf()
  local rows = {}
  for id in pairs(M.marks[bufnr] or {}) do
    local first = mark_lines(bufnr, id)
    if first and not vim.list_contains(rows, first) then
      table.insert(rows, first)
    end
  end
  if #rows == 0 then
    return log.notify("no pending hunk in this buffer")
  end
  table.sort(rows)
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  for _ = 1, count or 1 do
    local target
    for i = dir > 0 and 1 or #rows, dir > 0 and #rows or 1, dir do
      if (dir > 0 and rows[i] > row) or (dir < 0 and rows[i] < row) then
        target = rows[i]
        break
      end
    end
    if not target and vim.o.wrapscan then
      target = dir > 0 and rows[1] or rows[#rows]
    end
    if not target then
      break
    end
    row = target
  end
  vim.cmd("normal! m'")
  vim.api.nvim_win_set_cursor(0, { row + 1, 0 })
end

-- resolving -------------------------------------------------------------------------------

local VERB = { keep = "kept", undo = "undid" }

--- Where a hunk is, for a message: `a.py:18`, or its id when it is not in the list.
local function where(session_id, hunk_id)
  for _, hunk in ipairs(M.pending(session_id)) do
    if hunk.hunkId == hunk_id then
      local range = util.nn(hunk.range)
      return util.display_path(hunk.uri) .. (range and (":" .. (range.start.line + 1)) or "")
    end
  end
  return hunk_id
end

--- Send `agent/review/resolve` for one session; `cb(err, result)`.
local function send(session_id, action, params, cb)
  local client = client_mod.get(session_id)
  if not client then
    log.warn("the server is not running")
    return cb and cb("the server is not running")
  end
  local request = vim.tbl_extend("force", { sessionId = session_id, action = action }, params)
  client_mod.request(client, protocol.requests.review_resolve, request, function(err, result)
    if err then
      log.warn("%s failed: %s", action, client_mod.describe_error(err))
    else
      local resolved = result and result.resolved or {}
      for _, conflict in ipairs(result and result.conflicts or {}) do
        log.warn("could not undo %s: %s", where(session_id, conflict.hunkId), conflict.reason or "conflict")
      end
      log.notify("%s %d hunk%s", VERB[action], #resolved, #resolved == 1 and "" or "s")
      if action == "undo" then
        vim.cmd("silent! checktime") -- files that are not open are restored on disk
      end
    end
    M.fetch(session_id, function()
      if cb then
        cb(err, result)
      end
    end)
  end, true)
end

--- Resolve the given hunks (grouped by session); `reason`: why, or nil.
function M.resolve_hunks(action, hunks, cb, reason)
  local by_session, order = {}, {}
  for _, hunk in ipairs(hunks) do
    if not by_session[hunk.sessionId] then
      by_session[hunk.sessionId] = {}
      table.insert(order, hunk.sessionId)
    end
    table.insert(by_session[hunk.sessionId], hunk.hunkId)
  end
  if #order == 0 then
    log.notify("no pending hunk there")
    return cb and cb()
  end
  local left = #order
  for _, session_id in ipairs(order) do
    send(session_id, action, { hunkIds = by_session[session_id], reason = reason }, function()
      left = left - 1
      if left == 0 and cb then
        cb()
      end
    end)
  end
end

--- The hunks of the quickfix entries `l1`..`l2` of the review list (in its window).
local function qf_hunks(l1, l2)
  local hunks = {}
  local list = vim.fn.getqflist({ id = 0, items = 0 })
  if not qf_valid() or list.id ~= M.qf.id then
    return nil
  end
  for i = l1, l2 do
    local data = list.items[i] and list.items[i].user_data
    if type(data) == "table" and data.hunkId then
      table.insert(hunks, { hunkId = data.hunkId, sessionId = data.sessionId })
    end
  end
  return hunks
end

--- The pending hunks lines `l1`..`l2` (default: the cursor line) of `bufnr` cover; in the
--- review's quickfix window, the hunks of those entries.
function M.hunks_at(bufnr, l1, l2)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if not l1 then
    l1 = vim.api.nvim_win_get_cursor(0)[1]
    l2 = l1
  end
  l1, l2 = math.min(l1, l2 or l1), math.max(l1, l2 or l1)
  local hunks
  if vim.bo[bufnr].buftype == "quickfix" then
    hunks = qf_hunks(l1, l2)
  end
  return hunks or M.hunks_in(bufnr, l1, l2)
end

--- Keep or undo the pending hunks lines `l1`..`l2` (default: the cursor line) of `bufnr`
--- cover; in the review's quickfix window, the hunks of those entries. `reason`: why (sent
--- to the agent with the next prompt).
function M.resolve_lines(action, bufnr, l1, l2, cb, reason)
  M.resolve_hunks(action, M.hunks_at(bufnr, l1, l2), cb, reason)
end

--- Keep or undo every pending hunk of the current session (`what` "all") or of the current
--- buffer's file (`what` "file").
function M.resolve_all(action, what, cb)
  local session_id = session.current
  if not session_id then
    log.warn("no session to review")
    return cb and cb()
  end
  local params = {}
  if what == "file" then
    local bufnr = vim.api.nvim_get_current_buf()
    if not util.is_file_buffer(bufnr) then
      log.warn("not a file buffer")
      return cb and cb()
    end
    params.uris = { vim.uri_from_bufnr(bufnr) }
  end
  send(session_id, action, params, cb)
end

--- `:LspAgent keep|undo-hunk [all|file]`, with the command's range.
function M.command(action, args, range)
  args = vim.trim(args or "")
  if args == "all" or args == "file" then
    return M.resolve_all(action, args)
  end
  if args ~= "" then
    return log.warn("%s takes a range, all or file, not %q", action == "keep" and "keep" or "undo-hunk", args)
  end
  M.resolve_lines(action, 0, range and range[1], range and range[2])
end

--- `:LspAgent review`: the current session's pending hunks in the quickfix list (opened).
function M.show(cb)
  local session_id = session.current
  if not session_id then
    log.warn("no session to review")
    return cb and cb()
  end
  M.fetch(session_id, function(err)
    if err then
      log.warn("could not list the pending changes: %s", client_mod.describe_error(err))
      return cb and cb()
    end
    local items = M.qf_items(session_id)
    local what = { title = ("%s (%d)"):format(M.QF_TITLE, #items), items = items }
    if qf_valid() then
      what.id = M.qf.id
      vim.fn.setqflist({}, "r", what)
    else
      vim.fn.setqflist({}, " ", what)
      M.qf = { id = vim.fn.getqflist({ id = 0 }).id }
    end
    M.qf.session_id = session_id
    if #items == 0 then
      log.notify("no pending changes")
    else
      vim.cmd("botright copen")
    end
    map_qf(nil)
    if cb then
      cb()
    end
  end)
end

-- following the sessions ------------------------------------------------------------------

--- After a `review_update` (live or replayed): fetch the list again, once the session is
--- not loading.
local function on_change(s)
  if s.review_stale and not s.loading then
    s.review_stale = false
    M.fetch(s.id)
  end
end

session.on_change(on_change)

local group = vim.api.nvim_create_augroup("lsp_agent_review", { clear = true })
vim.api.nvim_create_autocmd("BufReadPost", {
  group = group,
  callback = function(args)
    if next(M.lists) then
      M.place(args.buf)
    end
  end,
})
vim.api.nvim_create_autocmd("FileType", {
  group = group,
  pattern = "qf",
  callback = function(args)
    map_qf(args.buf) -- the key works in any quickfix list; it acts on the review's entries only
  end,
})
vim.api.nvim_create_autocmd("BufWipeout", {
  group = group,
  callback = function(args)
    M.marks[args.buf] = nil
    mapped[args.buf] = nil
  end,
})

return M
