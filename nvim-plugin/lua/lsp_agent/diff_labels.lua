--- The diff tab's labels, made to fit: each side's winbar (which side, the file, how to close)
--- in as much detail as its window's width allows, and tab labels that name the file (the
--- default labels shortened the `lsp-agent://diff/…` buffer names to `l//d/c/p/…`).
---
--- The tab line is ours only while a diff tab is open and only when 'tabline' was empty
--- (Neovim's own); a 'tabline' of the user's is left alone.
local util = require("lsp_agent.util")

local M = {}

local SEPARATOR = " │ "
local TABLINE = "%!v:lua.require'lsp_agent.diff_labels'.tabline()"

local width_of = util.width_of

--- `path` cut from the left to `width` cells ("…/pkg/module.py"): the file name stays.
function M.cut_path(path, width)
  return util.truncate(path, width, true)
end

--- The winbar of a diff side `width` cells wide. `bar`: { side = "current"|"proposed", path,
--- editable, close (the close key or nil), hint, short_hint }. What gives way first: the
--- long words, then the hint, then the side's name; the file's name stays.
function M.winbar_text(bar, width)
  local proposed = bar.side == "proposed"
  local long_side = proposed
      and (bar.editable and "proposed by the agent (edit it: your text is what an allow applies): " or "proposed by the agent: ")
    or "current: "
  local short_side = proposed and (bar.editable and "proposed (editable): " or "proposed: ") or "current: "
  local closing = bar.close and (bar.close .. " or :tabclose") or ":tabclose"
  local key = bar.close or ":tabclose"
  local forms = {}
  if bar.hint then
    table.insert(forms, long_side .. bar.path .. SEPARATOR .. closing .. ": " .. bar.hint)
    table.insert(forms, short_side .. bar.path .. SEPARATOR .. key .. ": " .. bar.hint)
    table.insert(forms, short_side .. bar.path .. SEPARATOR .. key .. ": " .. (bar.short_hint or bar.hint))
  else
    table.insert(forms, long_side .. bar.path)
  end
  table.insert(forms, short_side .. bar.path)
  for _, text in ipairs(forms) do
    if width_of(text) <= width then
      return text
    end
  end
  local room = width - width_of(short_side)
  if room >= math.min(width_of(bar.path), 12) then
    return short_side .. M.cut_path(bar.path, room)
  end
  return M.cut_path(bar.path, width)
end

--- 'winbar' of a diff window (the window being drawn).
function M.winbar()
  local win = vim.g.statusline_winid or vim.api.nvim_get_current_win()
  local bar = vim.w[win].lsp_agent_diff_bar
  if type(bar) ~= "table" then
    return ""
  end
  return util.escape_status(M.winbar_text(bar, vim.api.nvim_win_get_width(win)))
end

--- Give the current window a diff side's winbar.
function M.set_winbar(bar)
  vim.w.lsp_agent_diff_bar = bar
  vim.wo.winbar = "%{%v:lua.require'lsp_agent.diff_labels'.winbar()%}"
end

--- The label of tab `tab`: a diff tab's "Δ module.py", else the file of its current window,
--- with the window count and "+" for a modified buffer as Neovim's own labels have them.
function M.tab_label(tab)
  local ok, name = pcall(function()
    return vim.t[tab].lsp_agent_diff_label
  end)
  local win = vim.api.nvim_tabpage_get_win(tab)
  local buf = vim.api.nvim_win_get_buf(win)
  if not (ok and name) then
    local bufname = vim.api.nvim_buf_get_name(buf)
    name = bufname == "" and "[No Name]" or vim.fn.fnamemodify(bufname, ":t")
  end
  local count = #vim.api.nvim_tabpage_list_wins(tab)
  local prefix = (count > 1 and tostring(count) or "") .. (vim.bo[buf].modified and "+" or "")
  return (prefix ~= "" and (prefix .. " ") or "") .. name
end

--- The tab line: every tab's label, each cut to its share of the width when they do not fit.
function M.tabline()
  local tabs = vim.api.nvim_list_tabpages()
  local current = vim.api.nvim_get_current_tabpage()
  local labels = {}
  local total = 0
  for i, tab in ipairs(tabs) do
    labels[i] = " " .. M.tab_label(tab) .. " "
    total = total + width_of(labels[i])
  end
  local room = math.floor(vim.o.columns / math.max(#tabs, 1))
  local parts = {}
  for i, tab in ipairs(tabs) do
    local label = labels[i]
    if total > vim.o.columns and width_of(label) > room then
      label = " " .. M.cut_path(vim.trim(label), math.max(room - 2, 1)) .. " "
    end
    local group = tab == current and "%#TabLineSel#" or "%#TabLine#"
    table.insert(parts, ("%s%%%dT%s"):format(group, vim.api.nvim_tabpage_get_number(tab), util.escape_status(label)))
  end
  return table.concat(parts) .. "%#TabLineFill#%T"
end

local function diff_tab_open()
  for _, tab in ipairs(vim.api.nvim_list_tabpages()) do
    if vim.t[tab].lsp_agent_diff_label then
      return true
    end
  end
  return false
end

--- Name tab `tab` for the file `path` and show our tab line (when 'tabline' is Neovim's own).
function M.label_tab(tab, path)
  vim.t[tab].lsp_agent_diff_label = "Δ " .. vim.fn.fnamemodify(path, ":t")
  if vim.o.tabline == "" then
    vim.o.tabline = TABLINE
    local group = vim.api.nvim_create_augroup("lsp_agent_diff_labels", { clear = true })
    vim.api.nvim_create_autocmd("TabClosed", {
      group = group,
      callback = function()
        vim.schedule(function()
          if vim.o.tabline == TABLINE and not diff_tab_open() then
            vim.o.tabline = ""
            pcall(vim.api.nvim_del_augroup_by_id, group)
          end
        end)
      end,
    })
  end
end

return M
