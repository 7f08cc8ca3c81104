--- The chat buffer of a session, rendered from its model: the prompts, the streamed text,
--- folded reasoning and editor context, one line per tool call (tool_card.lua), the plan and
--- a footer saying what the session waits for.
local config = require("lsp_agent.config")
local state = require("lsp_agent.chat.state")
local tool_card = require("lsp_agent.chat.tool_card")

local M = {}

local PLAN_MARK = { completed = "x", in_progress = "~", pending = " ", cancelled = "-" }

local function split(text)
  return vim.split(text or "", "\n", { plain = true })
end

local REWOUND = {
  both = "_⟲ undone from here — :LspAgent redo brings it back_",
  conversation = "_⟲ conversation rewound from here (the files stay) — :LspAgent redo brings it back_",
  code = "_⟲ files rewound to before this message (the conversation stays) — :LspAgent redo brings them back_",
}

--- The buffer lines of a session; `tools` maps line numbers to tool calls, `folds` gives the
--- foldexpr of the reasoning lines, `users` maps the lines of each prompt to its message id.
function M.render_lines(s)
  local lines, tools, folds, users = {}, {}, {}, {}
  local function add(line)
    table.insert(lines, line)
  end
  local role, last_kind = nil, nil
  local hidden_from = s.revert and s.revert.message_id
  local scope = s.revert and s.revert.scope or "both"
  local hiding = false
  for _, item in ipairs(s.items) do
    if hidden_from and item.kind == "user" and item.message_id == hidden_from then
      hiding = scope ~= "code"
      add("")
      add(REWOUND[scope] or REWOUND.both)
    end
    if not hiding then
      if item.kind == "user" then
        if #lines > 0 then
          add("")
        end
        add("## You" .. (item.queued and " (queued: sent when the turn ends)" or ""))
        users[#lines] = item.message_id
        add("")
        vim.list_extend(lines, split(item.text))
        for lnum = #lines - #split(item.text) + 1, #lines do
          users[lnum] = item.message_id
        end
        if item.context and item.context ~= "" then
          add("> _Editor context_")
          folds[#lines] = ">1"
          for _, line in ipairs(split(item.context)) do
            add("> " .. line)
            folds[#lines] = "1"
          end
        end
        role = "user"
      else
        if role ~= "agent" then
          add("")
          add("## Agent")
          add("")
          role = "agent"
        elseif last_kind and last_kind ~= item.kind and not (last_kind == "tool" and item.kind == "notice") then
          add("")
        end
        if item.kind == "text" then
          vim.list_extend(lines, split(item.text))
        elseif item.kind == "thought" then
          add("> _Thinking_")
          folds[#lines] = ">1"
          for _, line in ipairs(split(item.text)) do
            add("> " .. line)
            folds[#lines] = "1"
          end
        elseif item.kind == "tool" then
          add(tool_card.tool_line(item))
          tools[#lines] = item
          local output, dropped = tool_card.output_lines(item)
          if output then
            local hidden = #output - tool_card.OUTPUT_VISIBLE
            if hidden > 0 then
              local more = hidden + dropped
              add(("%s… %d earlier line%s (za shows them)"):format(tool_card.OUTPUT_PREFIX, more, more == 1 and "" or "s"))
              folds[#lines] = ">1"
              tools[#lines] = item
            end
            for i, line in ipairs(output) do
              add(tool_card.OUTPUT_PREFIX .. line)
              tools[#lines] = item
              if i <= hidden then
                folds[#lines] = "1"
              end
            end
          end
        elseif item.kind == "notice" then
          add("_" .. item.text .. "_")
        elseif item.kind == "error" then
          add("**✗ Error:** " .. split(item.text)[1])
          for i, line in ipairs(split(item.text)) do
            if i > 1 then
              add(line)
            end
          end
          if item == s.items[#s.items] and s.state ~= "running" and s.state ~= "requires_action" then
            local key = config.options.keymaps.chat.retry
            local press = key and ("press `" .. key .. "` or ") or ""
            add(("_Retry: %srun `:LspAgent retry` (sends your last prompt again)_"):format(press))
          end
        end
      end
      last_kind = item.kind
    end
  end
  if s.plan and #s.plan > 0 then
    add("")
    add("### Plan")
    add("")
    for _, entry in ipairs(s.plan) do
      local content = entry.status == "cancelled" and ("~~" .. entry.content .. "~~") or entry.content
      add(("- [%s] %s"):format(PLAN_MARK[entry.status] or " ", content))
    end
  end
  local footer
  if s.loading then
    footer = "_loading the session…_"
  elseif s.pending_permission then
    footer = ("_waiting for your permission: %s — `:LspAgent permission` answers_"):format(s.pending_permission.title or "")
  elseif s.state == "requires_action" then
    footer = "_waiting for your answer_"
  elseif s.state == "running" then
    footer = s.compacting and "_compacting…_" or "_working…_"
  elseif s.stop_reason == "cancelled" then
    footer = "_stopped_"
  elseif s.stop_reason == "max_steps" then
    footer = "_stopped: step limit reached_"
  elseif s.stop_reason == "refusal" then
    footer = "_the model refused_"
  end
  if footer then
    add("")
    add(footer)
  end
  if #lines == 0 then
    lines = { "_Type below; <CR> (normal mode) or <C-s> sends._" }
  end
  return lines, tools, folds, users
end

--- 'foldexpr' of chat windows.
function M.foldexpr()
  local view = state.view_of(vim.api.nvim_get_current_buf())
  return view and view.folds[vim.v.lnum] or "0"
end

function M.render(s)
  local view = state.views[s.id]
  if not view or not view.chat_buf or not vim.api.nvim_buf_is_valid(view.chat_buf) then
    return
  end
  local buf = view.chat_buf
  local lines, tools, folds, users = M.render_lines(s)
  local wins = vim.fn.win_findbuf(buf)
  local follow = {}
  local old_count = vim.api.nvim_buf_line_count(buf)
  for _, win in ipairs(wins) do
    local cursor = vim.api.nvim_win_get_cursor(win)[1]
    follow[win] = cursor >= old_count - 1 or win ~= vim.api.nvim_get_current_win()
  end
  -- before the lines: their change re-evaluates 'foldexpr'
  view.tools, view.folds, view.users = tools, folds, users
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  require("lsp_agent.links").mark(buf, lines)
  -- new folds (reasoning, editor context) start closed; folds the user opened stay open
  local starts = {}
  for lnum, expr in pairs(folds) do
    if expr == ">1" then
      table.insert(starts, lnum)
    end
  end
  table.sort(starts)
  if s.rebuilt then
    view.fold_count = 0
    s.rebuilt = false
  end
  local known = view.fold_count or 0
  view.fold_count = #starts
  for _, win in ipairs(wins) do
    if follow[win] then
      pcall(vim.api.nvim_win_set_cursor, win, { #lines, 0 })
    end
    for i = known + 1, #starts do
      vim.api.nvim_win_call(win, function()
        pcall(vim.cmd, starts[i] .. "foldclose")
      end)
    end
  end
  vim.cmd("redrawstatus!")
end


return M
