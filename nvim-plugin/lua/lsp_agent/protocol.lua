--- Protocol v1 names, in one place (docs/protocol.md, docs/protocol.schema.json).
---
--- Every `agent/...` method string and `lspAgent.*` command id of the plugin is written here
--- and nowhere else; tests/nvim/test_protocol_drift.py checks them against the server's
--- `lsp_agent.lsp.protocol.METHODS` and the JSON schema.
local M = {}

M.VERSION = 1

--- Client -> server requests.
M.requests = {
  session_new = "agent/session/new",
  session_list = "agent/session/list",
  session_search = "agent/session/search",
  session_load = "agent/session/load",
  set_config_option = "agent/session/setConfigOption",
  prompt = "agent/session/prompt",
  diff_get = "agent/diff/get",
  review_list = "agent/review/list",
  code_review_run = "agent/codeReview/run",
  review_resolve = "agent/review/resolve",
  review_comment = "agent/review/comment",
  review_send_comments = "agent/review/sendComments",
  commit_message = "agent/commitMessage",
  revert_stage = "agent/revert/stage",
  session_compact = "agent/session/compact",
  permissions_list = "agent/permissions/list",
  permissions_revoke = "agent/permissions/revoke",
  config_options = "agent/config/options",
  next_edit = "agent/nextEdit",
}

--- Client -> server notifications.
M.notifications = {
  cancel = "agent/session/cancel",
  diagnostics = "agent/diagnostics",
  next_edit_feedback = "agent/nextEdit/feedback",
}

--- Server -> client notifications (handled in `lsp_agent.handlers`).
M.server_notifications = {
  update = "agent/session/update",
}

--- Server -> client requests (answered in `lsp_agent.handlers`).
M.server_requests = {
  request_permission = "agent/session/requestPermission",
  ask_question = "agent/session/askQuestion",
  editor_query = "agent/editor/query",
  save_documents = "agent/documents/save",
}

--- `workspace/executeCommand` ids (design §8); used only when the server advertises them in
--- `capabilities.experimental.agent.commands`.
M.commands = {
  fix = "lspAgent.fix",
  ask = "lspAgent.ask",
  explain = "lspAgent.explain",
  cancel = "lspAgent.cancel",
  undo = "lspAgent.undo",
  redo = "lspAgent.redo",
  review = "lspAgent.review",
  fix_finding = "lspAgent.fixFinding",
  dismiss_finding = "lspAgent.dismissFinding",
}

--- Commands the server puts on what it answers, run by the plugin itself (never sent back):
--- an inline completion item's command reports its accept (lua/lsp_agent/completion.lua).
M.client_commands = {
  inline_accepted = "lsp-agent.inlineCompletionAccepted",
}

--- Permission option kinds (protocol.md §4).
M.option_kinds = { "allow_once", "allow_session", "allow_always", "reject_once" }

--- The modes a client may pick: the server's one table of modes (`lsp_agent.core.modes`,
--- checked by tests/nvim/test_protocol.py), here only so `setup()` can refuse a misspelt
--- `mode` before the server runs. At run time the modes come from the server's
--- `configOptions` (the session's, or `agent/config/options` before the first session).
M.modes = { "build", "plan" }

--- `scope` of `agent/revert/stage` (protocol.md §7): what a rewind takes back.
M.revert_scopes = { "both", "code", "conversation" }

return M
