--- Comments per hunk (protocol.md "Comments on hunks"): a comment on the pending hunk under
--- the cursor (a buffer with signs, or the review's quickfix window), or a reason given with
--- an undo. They go to the agent at the start of your next prompt; `:LspAgent send-comments`
--- sends them at once as a prompt of their own.
local client_mod = require("lsp_agent.client")
local log = require("lsp_agent.log")
local protocol = require("lsp_agent.protocol")
local review = require("lsp_agent.review")
local session = require("lsp_agent.session")

local M = {}

--- Ask for a text with `vim.ui.input`; `cb(text)` only for a text that is not blank.
local function ask(prompt, given, cb)
  if given and vim.trim(given) ~= "" then
    return cb(vim.trim(given))
  end
  vim.ui.input({ prompt = prompt }, function(text)
    if text and vim.trim(text) ~= "" then
      cb(vim.trim(text))
    end
  end)
end

--- Comment on the hunks lines `l1`..`l2` (default: the cursor line) of `bufnr` cover;
--- `text`: the comment (else asked for). `cb(err)` once sent.
function M.comment_lines(bufnr, l1, l2, text, cb)
  local hunks = review.hunks_at(bufnr, l1, l2)
  if #hunks == 0 then
    log.notify("no pending hunk there")
    return cb and cb("no hunk")
  end
  ask("Comment on the change: ", text, function(comment)
    local left, failed = #hunks, nil
    for _, hunk in ipairs(hunks) do
      local client = client_mod.get(hunk.sessionId)
      if not client then
        log.warn("the server is not running")
        return cb and cb("the server is not running")
      end
      local params = { sessionId = hunk.sessionId, hunkId = hunk.hunkId, text = comment }
      client_mod.request(client, protocol.requests.review_comment, params, function(err)
        failed = failed or err
        left = left - 1
        if left == 0 then
          if not failed then
            log.notify("comment kept: it goes to the agent with your next prompt (or :LspAgent send-comments)")
          end
          if cb then
            cb(failed)
          end
        end
      end)
    end
  end)
end

--- Undo the hunks of lines `l1`..`l2` with a reason (`text`, else asked for).
function M.undo_with_reason(bufnr, l1, l2, text, cb)
  local hunks = review.hunks_at(bufnr, l1, l2)
  if #hunks == 0 then
    log.notify("no pending hunk there")
    return cb and cb()
  end
  ask("Why undo it? ", text, function(reason)
    review.resolve_hunks("undo", hunks, cb, reason)
  end)
end

--- `:LspAgent send-comments`: the current session's unsent comments as a prompt now.
function M.send(cb)
  local session_id = session.current
  if not session_id then
    log.warn("no session to send comments to")
    return cb and cb("no session")
  end
  local client = client_mod.get(session_id)
  if not client then
    log.warn("the server is not running")
    return cb and cb("the server is not running")
  end
  client_mod.request(client, protocol.requests.review_send_comments, { sessionId = session_id }, function(err, result)
    if not err then
      local sent = result and result.sent or 0
      if sent == 0 then
        log.notify("no comment to send")
      else
        log.notify("sent %d comment%s to the agent", sent, sent == 1 and "" or "s")
      end
    end
    if cb then
      cb(err, result)
    end
  end)
end

return M
