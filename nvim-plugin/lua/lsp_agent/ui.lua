--- `vim.ui.select` / `vim.ui.input` awaited inside a coroutine (the handlers of server
--- requests run in one), whether the UI answers at once (the default `inputlist()`) or later.
local M = {}

local function await(start)
  local co = coroutine.running()
  assert(co, "must run in a coroutine")
  local done, a, b = false, nil, nil
  start(function(x, y)
    if done then
      return
    end
    done, a, b = true, x, y
    vim.schedule(function()
      if coroutine.status(co) == "suspended" then
        coroutine.resume(co)
      end
    end)
  end)
  while not done do
    coroutine.yield()
  end
  return a, b
end
M.await = await

--- @return any choice, integer? index
function M.select(items, opts)
  return await(function(cb)
    vim.ui.select(items, opts, cb)
  end)
end

--- @return string? text
function M.input(opts)
  return await(function(cb)
    vim.ui.input(opts, cb)
  end)
end

--- Whether the caller can wait (runs in a coroutine other than the main one).
function M.can_wait()
  local co, is_main = coroutine.running()
  return co ~= nil and not is_main
end

return M
