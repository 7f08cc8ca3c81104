--- `agent/session/askQuestion` (protocol.md §5): a single choice through `vim.ui.select`;
--- several choices or a free-text answer in a small scratch buffer.
local log = require("lsp_agent.log")
local ui = require("lsp_agent.ui")
local util = require("lsp_agent.util")

local M = {}

M.TYPE_ANSWER = "Type an answer…"
M.ANSWER_PREFIX = "Answer: "

--- The scratch-buffer form of one question; `cb(answer|nil)` (nil: declined).
--- `free_text_only`: no checkboxes (a single-choice question answered in words).
function M.form(question, free_text_only, cb)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, ("lsp-agent://question/%s/%d"):format(question.questionId, buf))
  vim.bo[buf].buftype = "acwrite"
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].filetype = "markdown"
  local header = util.nn(question.header) or ""
  local lines = {
    ("# %s%s"):format(header ~= "" and (header .. ": ") or "", question.question),
  }
  local first_option, options = nil, {}
  if not free_text_only then
    table.insert(lines, question.multiple and "<!-- toggle with x or <Space>; <CR> or :w sends, q declines -->" or "<!-- mark one with x; <CR> or :w sends, q declines -->")
    first_option = #lines + 1
    for _, option in ipairs(question.options or {}) do
      local description = util.nn(option.description)
      table.insert(lines, ("[ ] %s%s"):format(option.label, description and (" — " .. description) or ""))
      table.insert(options, option.label)
    end
  else
    table.insert(lines, "<!-- write your answer; <CR> (normal mode) or :w sends, q declines -->")
  end
  local custom = util.nn(question.custom) ~= false or free_text_only
  local answer_line
  if custom then
    table.insert(lines, M.ANSWER_PREFIX)
    answer_line = #lines
  end
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modified = false

  vim.cmd("stopinsert")
  vim.cmd("botright split")
  local win = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(win, buf)
  vim.api.nvim_win_set_height(win, math.min(#lines + 2, 15))

  local finished = false
  local function finish(answer)
    if finished then
      return
    end
    finished = true
    if vim.api.nvim_win_is_valid(win) then
      pcall(vim.api.nvim_win_close, win, true)
    end
    if vim.api.nvim_buf_is_valid(buf) then
      pcall(vim.api.nvim_buf_delete, buf, { force = true })
    end
    cb(answer)
  end

  local function submit()
    local current = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    local selected = {}
    if first_option then
      for i, label in ipairs(options) do
        local line = current[first_option + i - 1] or ""
        if line:match("^%[[xX]%]") then
          table.insert(selected, label)
        end
      end
    end
    local answer = { selected = selected }
    if answer_line then
      local text = {}
      for i = answer_line, #current do
        local line = current[i]
        if i == answer_line then
          line = line:gsub("^" .. vim.pesc(vim.trim(M.ANSWER_PREFIX)) .. "%s?", "")
        end
        table.insert(text, line)
      end
      local joined = vim.trim(table.concat(text, "\n"))
      if joined ~= "" then
        answer.custom = joined
      end
    end
    vim.schedule(function()
      finish(answer)
    end)
  end

  local function toggle()
    local lnum = vim.api.nvim_win_get_cursor(0)[1]
    if not first_option or lnum < first_option or lnum >= first_option + #options then
      return
    end
    local line = vim.api.nvim_buf_get_lines(buf, lnum - 1, lnum, false)[1]
    local on = line:match("^%[[xX]%]") ~= nil
    if not question.multiple and not on then
      for i = first_option, first_option + #options - 1 do
        local other = vim.api.nvim_buf_get_lines(buf, i - 1, i, false)[1]
        vim.api.nvim_buf_set_lines(buf, i - 1, i, false, { (other:gsub("^%[[xX]%]", "[ ]")) })
      end
      line = vim.api.nvim_buf_get_lines(buf, lnum - 1, lnum, false)[1]
    end
    local new = on and line:gsub("^%[[xX]%]", "[ ]") or line:gsub("^%[ %]", "[x]")
    vim.api.nvim_buf_set_lines(buf, lnum - 1, lnum, false, { new })
  end

  local map = function(lhs, fn, desc)
    vim.keymap.set("n", lhs, fn, { buffer = buf, nowait = true, desc = desc })
  end
  map("<CR>", submit, "lsp-agent: send the answer")
  map("x", toggle, "lsp-agent: toggle the option")
  map("<Space>", toggle, "lsp-agent: toggle the option")
  map("q", function()
    vim.schedule(function()
      finish(nil)
    end)
  end, "lsp-agent: decline")
  vim.api.nvim_create_autocmd("BufWriteCmd", { buffer = buf, callback = submit })
  vim.api.nvim_create_autocmd("BufWipeout", {
    buffer = buf,
    callback = function()
      vim.schedule(function()
        finish(nil)
      end)
    end,
  })
  if answer_line then
    vim.api.nvim_win_set_cursor(win, { first_option or answer_line, 0 })
    if free_text_only then
      vim.api.nvim_win_set_cursor(win, { answer_line, #M.ANSWER_PREFIX })
    end
  end
  return buf
end

local function ask_one(question)
  local options = question.options or {}
  local custom = util.nn(question.custom) ~= false
  if not question.multiple and #options > 0 then
    local items = {}
    for _, option in ipairs(options) do
      local description = util.nn(option.description)
      table.insert(items, { label = option.label, text = option.label .. (description and (" — " .. description) or "") })
    end
    if custom then
      table.insert(items, { text = M.TYPE_ANSWER, free = true })
    end
    local header = util.nn(question.header) or ""
    local choice = ui.select(items, {
      prompt = ("%s%s"):format(header ~= "" and (header .. ": ") or "", question.question),
      kind = "lsp_agent_question",
      format_item = function(item)
        return item.text
      end,
    })
    if not choice then
      return nil
    end
    if not choice.free then
      return { selected = { choice.label } }
    end
    return ui.await(function(cb)
      M.form(question, true, cb)
    end)
  end
  return ui.await(function(cb)
    M.form(question, #options == 0, cb)
  end)
end

--- The handler (runs in the RPC coroutine).
function M.ask(params, _ctx)
  if type(params) ~= "table" or type(params.questions) ~= "table" or not ui.can_wait() then
    return { outcome = "declined" }
  end
  local answers = {}
  for _, question in ipairs(params.questions) do
    local answer = ask_one(question)
    if not answer then
      log.info("question %s declined", question.questionId)
      return { outcome = "declined" }
    end
    answers[question.questionId] = answer
  end
  return { outcome = "answered", answers = answers }
end

return M
