/**
 * lsp-agent protocol v1, as the VS Code front-end uses it (docs/protocol.md).
 *
 * Method names live only here. `test/unit/protocolDrift.test.ts` checks every name, direction and
 * kind against docs/protocol.schema.json (generated from the server's lsp_agent/lsp/protocol.py),
 * and the update variants against its `sessionUpdates`, so the two sides cannot drift.
 */

export const PROTOCOL_VERSION = 1;

type Direction = "client_to_server" | "server_to_client";
type Kind = "request" | "notification";
interface MethodSpec {
  readonly name: string;
  readonly direction: Direction;
  readonly kind: Kind;
}
const m = <N extends string>(name: N, direction: Direction, kind: Kind) => ({ name, direction, kind }) as const;

/** Every `agent/*` method this extension sends or handles. */
export const Methods = {
  sessionNew: m("agent/session/new", "client_to_server", "request"),
  sessionList: m("agent/session/list", "client_to_server", "request"),
  sessionSearch: m("agent/session/search", "client_to_server", "request"),
  sessionLoad: m("agent/session/load", "client_to_server", "request"),
  sessionExport: m("agent/session/export", "client_to_server", "request"),
  sessionDelete: m("agent/session/delete", "client_to_server", "request"),
  sessionSetConfigOption: m("agent/session/setConfigOption", "client_to_server", "request"),
  configOptions: m("agent/config/options", "client_to_server", "request"),
  sessionCompact: m("agent/session/compact", "client_to_server", "request"),
  sessionPrompt: m("agent/session/prompt", "client_to_server", "request"),
  sessionCancel: m("agent/session/cancel", "client_to_server", "notification"),
  diagnostics: m("agent/diagnostics", "client_to_server", "notification"),
  diffGet: m("agent/diff/get", "client_to_server", "request"),
  revertStage: m("agent/revert/stage", "client_to_server", "request"),
  reviewList: m("agent/review/list", "client_to_server", "request"),
  reviewResolve: m("agent/review/resolve", "client_to_server", "request"),
  codeReviewRun: m("agent/codeReview/run", "client_to_server", "request"),
  reviewComment: m("agent/review/comment", "client_to_server", "request"),
  reviewSendComments: m("agent/review/sendComments", "client_to_server", "request"),
  commitMessage: m("agent/commitMessage", "client_to_server", "request"),
  permissionsList: m("agent/permissions/list", "client_to_server", "request"),
  permissionsRevoke: m("agent/permissions/revoke", "client_to_server", "request"),
  sessionUpdate: m("agent/session/update", "server_to_client", "notification"),
  requestPermission: m("agent/session/requestPermission", "server_to_client", "request"),
  askQuestion: m("agent/session/askQuestion", "server_to_client", "request"),
  editorQuery: m("agent/editor/query", "server_to_client", "request"),
  saveDocuments: m("agent/documents/save", "server_to_client", "request"),
  nextEdit: m("agent/nextEdit", "client_to_server", "request"),
  nextEditFeedback: m("agent/nextEdit/feedback", "client_to_server", "notification"),
} as const satisfies Record<string, MethodSpec>;

/**
 * The server's `workspace/executeCommand` ids (protocol.md §8). vscode-languageclient registers
 * them as VS Code commands itself, so the palette commands in package.json use other ids.
 */
export const ServerCommands = {
  fix: "lspAgent.fix",
  ask: "lspAgent.ask",
  explain: "lspAgent.explain",
  cancel: "lspAgent.cancel",
  undo: "lspAgent.undo",
  redo: "lspAgent.redo",
  review: "lspAgent.review",
  fixFinding: "lspAgent.fixFinding",
  dismissFinding: "lspAgent.dismissFinding",
} as const;

/**
 * Commands the server names in what it sends and this extension registers (never a server
 * command: vscode-languageclient would register that too). An inline completion item's command
 * is `inlineCompletionAccepted` with the item's id in `arguments`: VS Code runs it on accept.
 */
export const ClientCommands = {
  inlineCompletionAccepted: "lsp-agent.inlineCompletionAccepted",
} as const;

export const ErrorCodes = {
  InvalidParams: -32602,
  SessionNotFound: -33001,
  SessionBusy: -33002,
  VersionConflict: -33003,
  RevertBlocked: -33004,
} as const;

// -- basic shapes --------------------------------------------------------------------------------

export interface Position { line: number; character: number }
export interface Range { start: Position; end: Position }
export interface Diagnostic {
  range: Range;
  message: string;
  severity?: number;
  source?: string;
  code?: string | number;
}
export type ContentBlock =
  | { type: "text"; text: string }
  | { type: "resource_link"; uri: string; range?: Range }
  | { type: "resource"; uri: string; text: string }
  | MentionBlock
  | ImageBlock;
/** A pasted or dropped image (docs/protocol.md "Images"): `data` is base64, at most 5 MiB before encoding. */
export interface ImageBlock { type: "image"; mimeType: ImageType; data: string; name?: string }
export type ImageType = "image/png" | "image/jpeg" | "image/gif" | "image/webp";
export const IMAGE_TYPES: readonly ImageType[] = ["image/png", "image/jpeg", "image/gif", "image/webp"];
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
/** `#diagnostics`, `#selection`, `#buffers`, `#diff`: the server expands it when the prompt is admitted. */
export interface MentionBlock { type: "mention"; name: MentionName; uri?: string }
export type MentionName = "diagnostics" | "selection" | "buffers" | "diff";
export const MENTION_NAMES: readonly MentionName[] = ["diagnostics", "selection", "buffers", "diff"];

export type SessionState = "idle" | "running" | "requires_action";
export type StopReason = "end_turn" | "max_steps" | "cancelled" | "error" | "refusal";

export interface ConfigChoice { value: string; name: string; description?: string }
export interface ConfigOption {
  configId: "mode" | "model";
  name: string;
  category: "mode" | "model";
  type: "select";
  currentValue: string;
  options: ConfigChoice[];
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  contextUsed: number;
  contextSize: number;
  cost?: number;
}

// -- initialize ----------------------------------------------------------------------------------

export interface AgentClientOptions {
  protocolVersion: 1;
  ui: { chat: boolean; diff: boolean; permissions: boolean; questions: boolean; plan: boolean };
  forwardsDiagnostics: boolean;
  clientInfo: { name: string; version: string };
  /** The user's settings: the trusted, user config layer. */
  config?: Record<string, unknown>;
  /** Settings a workspace set: untrusted, checked like the project file. */
  workspaceConfig?: Record<string, unknown>;
  /** The `agent/editor/query` kinds this client answers. */
  editorQueries?: EditorQueryKind[];
  /** This client answers `agent/documents/save` (protocol.md §6). */
  savesDocuments?: boolean;
}
export interface AgentServerCapabilities {
  protocolVersion: number;
  sessions: Record<string, boolean>;
  revert: boolean;
  commands: string[];
  /** `agent/review/*` and `review_update` (issue 21). */
  review?: boolean;
  /** The `mention` block names the server expands (issue 22). */
  mentions?: string[];
  /** `agent/review/comment|sendComments` and `resolve`'s `reason` (issue 37). */
  reviewComments?: boolean;
  /** `agent/commitMessage` (issue 37). */
  commitMessage?: boolean;
}

// -- sessions ------------------------------------------------------------------------------------

export interface SessionNewParams { workspaceFolder?: string; title?: string; mode?: string; model?: string }
export interface SessionNewResult { sessionId: string; configOptions: ConfigOption[] }
export interface SessionSummary {
  sessionId: string;
  title: string;
  workspaceFolder: string;
  createdAt: string;
  updatedAt: string;
  state: SessionState;
  usage: Partial<Usage>;
}
export interface SessionListParams { workspaceFolder?: string; limit?: number; cursor?: string }
export interface SessionListResult { sessions: SessionSummary[]; nextCursor?: string }
export interface SessionSearchParams { query: string; workspaceFolder?: string; limit?: number }
export type SearchHitKind = "user" | "assistant" | "reasoning" | "tool_input" | "tool_output";
export interface SessionSearchHit {
  sessionId: string;
  title: string;
  messageId: string;
  snippet: string;
  /** The session's last update. */
  updatedAt: string;
  /** When the matching message was written (absent from an older server). */
  time?: string;
  kind: SearchHitKind;
}
export interface SessionSearchResult { hits: SessionSearchHit[] }
export type Replay = "none" | "full" | { fromSeq: number };
export interface SessionLoadParams { sessionId: string; replay: Replay }
export interface SessionLoadResult { state: SessionState; lastSeq: number; configOptions: ConfigOption[] }
export interface SetConfigOptionParams { sessionId: string; configId: "mode" | "model"; value: string }
export interface ConfigOptionsResult { configOptions: ConfigOption[] }
export interface SessionExportParams { sessionId: string; format: "markdown" | "json" }
export interface PromptParams {
  sessionId: string;
  prompt: ContentBlock[];
  clientMessageId?: string;
  context?: PromptContext;
  /** "Until green" (docs/protocol.md): after each turn `command` runs; while it fails the agent goes on. */
  until?: UntilParams;
}
export interface UntilParams { command: string; maxAttempts?: number; maxCost?: number }
/** The user's focus when the prompt was sent (the server renders it into that message only). */
export interface PromptContext {
  activeDocument?: { uri: string };
  cursor?: Position;
  selection?: Range;
  /** At most `MAX_SELECTED_TEXT` characters. */
  selectedText?: string;
  diagnostics?: Diagnostic[];
}
export const MAX_SELECTED_TEXT = 100_000;
export interface PromptResult { userMessageId: string; queued: boolean }
export interface DiagnosticsParams { items: { uri: string; version?: number; diagnostics: Diagnostic[] }[] }
export interface DiffGetParams { sessionId: string; changeSetId: string; uri: string }
export interface DiffGetResult { uri: string; baseText: string; proposedText: string; patch: string }

// -- editor queries (docs/protocol.md "agent/editor/query") --------------------------------------

export type EditorQueryKind = "definition" | "references" | "hover" | "documentSymbols" | "workspaceSymbols" | "implementation" | "typeDefinition";
export interface EditorQueryParams { sessionId: string; kind: EditorQueryKind; uri?: string | null; position?: Position | null; query?: string | null }
/** LSP's own shapes (Location | LocationLink, Hover, DocumentSymbol | SymbolInformation); `[]`: no answer. */
export interface EditorQueryResult { items: Record<string, unknown>[] }

// -- §6 saving the agent's edits ----------------------------------------------------------------

export interface DocumentToSave { uri: string; version: number }
export interface SaveDocumentsParams { documents: DocumentToSave[] }
export interface SavedDocument { uri: string; saved: boolean; version?: number | null; reason?: string | null }
export interface SaveDocumentsResult { documents: SavedDocument[] }

// -- review and rewind (docs/protocol.md "Review") -----------------------------------------------

export type HunkStatus = "pending" | "kept" | "undone";
export type ReviewFileStatus = HunkStatus | "mixed";
/** One contiguous changed region of one file made by one agent step; whole lines. */
export interface ReviewHunk {
  hunkId: string;
  status: HunkStatus;
  messageId: string;
  /** Where `newText` is in the file's current text (`oldText` once undone); null when no longer found. */
  range: Range | null;
  oldText: string;
  newText: string;
  /** The user's comments on it (and keep/undo reasons); `sent`: gone to the model already. */
  comments?: ReviewComment[];
}
export interface ReviewComment { commentId: string; text: string; action: "comment" | "keep" | "undo"; sent: boolean }
export interface ReviewFile { uri: string; status: ReviewFileStatus; hunks: ReviewHunk[] }
export interface ReviewListParams { sessionId: string }
export interface ReviewListResult { files: ReviewFile[]; unsentComments?: number }
export type ReviewAction = "keep" | "undo";
export interface ReviewResolveParams { sessionId: string; action: ReviewAction; hunkIds?: string[]; uris?: string[]; reason?: string }
export interface ReviewCommentParams { sessionId: string; hunkId: string; text: string }
export interface ReviewCommentResult { commentId: string }
export interface ReviewSendCommentsResult { userMessageId: string | null; queued: boolean; sent: number }
export interface CommitMessageParams { uri?: string }
export interface CommitMessageResult { message: string }
export interface ReviewConflict { hunkId: string; reason: string }
export interface ReviewResolveResult { resolved: string[]; conflicts: ReviewConflict[] }
export interface ReviewFileCounts { uri: string; status: ReviewFileStatus; pending: number; kept: number; undone: number }

// -- the agent's review of the person's changes (docs/protocol.md "Agent review of changes") ----

export interface CodeReviewRunParams { workspaceFolder?: string; staged?: boolean; base?: string }
export interface RelatedLocation { uri: string; range: Range; message: string }
export interface CodeReviewFinding { id: string; uri: string; range: Range; severity: number; message: string; related: RelatedLocation[] }
export interface CodeReviewRunResult { findings: CodeReviewFinding[]; summary: string }

export type RevertScope = "both" | "code" | "conversation";
export interface RevertStageParams { sessionId: string; messageId: string; force?: boolean; scope?: RevertScope }
export interface RevertStageResult { files: string[]; conflicts: string[] }

/** The argument of `lspAgent.fix|ask|explain` (protocol.md §8); no `sessionId`: a new session. */
export interface CommandTarget {
  uri: string;
  range: Range;
  diagnostics?: Diagnostic[];
  sessionId?: string;
  prompt?: string;
}
/** The argument of `lspAgent.cancel|undo|redo`. */
export interface CommandSession { sessionId: string }
export interface CommandStarted { sessionId: string }
export interface UndoResult { sessionId: string; messageId: string; prompt: ContentBlock[] }

// -- streaming -----------------------------------------------------------------------------------

export type ToolKind = "read" | "edit" | "delete" | "move" | "search" | "execute" | "think" | "fetch" | "other";
export type ToolStatus = "pending" | "in_progress" | "completed" | "failed" | "cancelled" | "interrupted";
export type ToolContent =
  | { type: "text"; text: string }
  | { type: "diff"; changeSetId: string; changes: { uri: string; operation: string; additions: number; deletions: number }[]; patch: string };
export interface Location { uri: string; range?: Range }
export interface PlanEntry { content: string; status: "pending" | "in_progress" | "completed" | "cancelled"; priority: "high" | "medium" | "low" }
export interface CheckpointFile { path?: string; uri?: string; status: string; additions: number; deletions: number }

export interface UserMessageUpdate { sessionUpdate: "user_message"; messageId: string; content: ContentBlock[]; state: "admitted" | "promoted" }
export interface AgentMessageChunk { sessionUpdate: "agent_message_chunk"; messageId: string; text: string }
export interface AgentThoughtChunk { sessionUpdate: "agent_thought_chunk"; messageId: string; text: string }
export interface AgentMessageEnd { sessionUpdate: "agent_message_end"; messageId: string; status: "completed" | "interrupted" | "failed" }
export interface ToolCallUpdate {
  sessionUpdate: "tool_call_update";
  toolCallId: string;
  messageId: string;
  toolName: string;
  title?: string;
  kind?: ToolKind;
  status?: ToolStatus;
  rawInput?: unknown;
  content?: ToolContent[];
  locations?: Location[];
  /** A finished command's exit status (bash): non-zero is still `completed`. */
  exitCode?: number;
  /** The person or a rule refused the call: its status stays `failed`, but it is no failure. */
  refused?: boolean;
}
export interface PlanUpdate { sessionUpdate: "plan_update"; entries: PlanEntry[] }
export interface StateUpdate {
  sessionUpdate: "state_update";
  state: SessionState;
  stopReason?: StopReason;
  error?: { message: string; retryable: boolean; retryAt?: string };
  /** Problems outside the turn (an MCP server that could not start), each told once per session. */
  notes?: string[];
}
export interface UsageUpdate extends Usage { sessionUpdate: "usage_update" }
export interface ConfigOptionUpdate { sessionUpdate: "config_option_update"; configOptions: ConfigOption[] }
export interface SessionInfoUpdate { sessionUpdate: "session_info_update"; title?: string; updatedAt?: string }
export interface CheckpointUpdate { sessionUpdate: "checkpoint_update"; checkpointId: string; messageId: string; files: CheckpointFile[]; patch?: string }
export interface RevertUpdate {
  sessionUpdate: "revert_update";
  state: "staged" | "cleared" | "committed";
  messageId?: string | null;
  files?: CheckpointFile[];
  scope?: RevertScope;
}
/** The session's review list changed: every file with its counts (texts and ranges: `agent/review/list`). */
export interface ReviewUpdate { sessionUpdate: "review_update"; files: ReviewFileCounts[] }
export interface CompactionUpdate { sessionUpdate: "compaction_update"; phase: "started" | "ended"; auto: boolean }
export interface PermissionUpdate {
  sessionUpdate: "permission_update";
  toolCallId: string;
  permission: string;
  state: "asked" | "allowed" | "rejected" | "cancelled";
  optionKind?: string;
  reason?: string;
  /** The user edited the proposal: their text was applied. */
  modified?: boolean;
}
export interface QuestionUpdate { sessionUpdate: "question_update"; toolCallId: string; state: "asked" | "answered" | "declined" | "cancelled" }
export interface InternalUpdate { sessionUpdate: "internal"; type: string }
/** A prompt's `until` command ran after turn `attempt` (docs/protocol.md "Until green"). */
export interface UntilUpdate {
  sessionUpdate: "until_update";
  command: string;
  attempt: number;
  maxAttempts: number;
  verdict: "passed" | "retry" | "attempts" | "cost" | "stopped";
  exitCode?: number;
  error?: string;
}

export type SessionUpdate =
  | UserMessageUpdate
  | AgentMessageChunk
  | AgentThoughtChunk
  | AgentMessageEnd
  | ToolCallUpdate
  | PlanUpdate
  | StateUpdate
  | UsageUpdate
  | ConfigOptionUpdate
  | SessionInfoUpdate
  | CheckpointUpdate
  | RevertUpdate
  | CompactionUpdate
  | PermissionUpdate
  | QuestionUpdate
  | ReviewUpdate
  | UntilUpdate
  | InternalUpdate;

/** The variants as a runtime list (the drift test compares it with the schema's `sessionUpdates`). */
export const SESSION_UPDATE_KINDS = [
  "user_message",
  "agent_message_chunk",
  "agent_thought_chunk",
  "agent_message_end",
  "tool_call_update",
  "plan_update",
  "state_update",
  "usage_update",
  "config_option_update",
  "session_info_update",
  "checkpoint_update",
  "revert_update",
  "compaction_update",
  "permission_update",
  "question_update",
  "review_update",
  "until_update",
  "internal",
] as const;

// Compile-time proof that the runtime list and the union name the same variants.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
const sameVariants: Same<SessionUpdate["sessionUpdate"], (typeof SESSION_UPDATE_KINDS)[number]> = true;
void sameVariants;

export interface SessionUpdateParams { sessionId: string; seq: number; update: SessionUpdate }

// -- permission and questions --------------------------------------------------------------------

export type PermissionOptionKind = "allow_once" | "allow_session" | "allow_always" | "reject_once";
export interface PermissionOption { optionId: string; name: string; kind: PermissionOptionKind }
export type PermissionSubject =
  | { type: "edit"; changeSetId: string; patch: string; files: { uri: string; additions: number; deletions: number }[] }
  | { type: "command"; command: string; cwd: string }
  | { type: "fetch"; url: string };
export interface RequestPermissionParams {
  sessionId: string;
  toolCallId: string;
  title: string;
  description?: string | null;
  permission: string;
  patterns: string[];
  /** Exactly what "allow for session" / "always allow" save (the option names say it too). */
  always?: string[];
  subject?: PermissionSubject | null;
  options: PermissionOption[];
}

/** A saved approval (protocol.md §10a); `pattern` exactly as saved (`[*]` is a literal `*`). */
export interface SavedApproval {
  scope: "session" | "project";
  scopeId: string;
  permission: string;
  pattern: string;
  sessionId: string;
  createdAt: string;
}
export interface PermissionsListParams {
  workspaceFolder?: string | null;
}
export interface PermissionsListResult {
  approvals: SavedApproval[];
}
export interface PermissionsRevokeParams {
  scope: "session" | "project";
  scopeId: string;
  permission: string;
  pattern: string;
}
export interface PermissionsRevokeResult {
  revoked: boolean;
}
export type RequestPermissionResult =
  | { outcome: { outcome: "selected"; optionId: string; reason?: string; modifiedContent?: Record<string, string> } }
  | { outcome: { outcome: "cancelled" } };

export interface Question {
  questionId: string;
  header: string;
  question: string;
  options: { label: string; description?: string | null }[];
  multiple?: boolean;
  custom?: boolean;
}
export interface AskQuestionParams { sessionId: string; toolCallId: string; questions: Question[] }
export type AskQuestionResult =
  | { outcome: "answered"; answers: Record<string, { selected: string[]; custom?: string }> }
  | { outcome: "declined" }
  | { outcome: "cancelled" };

// -- the wire keys, checked ----------------------------------------------------------------------

/**
 * `keys<T>()([...])` compiles only when the list names every key of `T` (and nothing else), so each
 * list below is the TS interface's keys; the drift test compares it with the schema's properties.
 */
const keys =
  <T>() =>
  <const K extends readonly (keyof T)[]>(list: K & ([keyof T] extends [K[number]] ? unknown : never)): K =>
    list;

// -- next-edit suggestions and inline-completion feedback (issue 36) ------------------------------

/** The next-edit request (Methods.nextEdit): one suggested edit anywhere in the document, at the version given. */
export interface NextEditParams {
  textDocument: { uri: string; version: number };
  position: Position;
}

/** The suggestion (its range is in the document version asked about); the result is this or null. */
export interface NextEditResult {
  id: string;
  uri: string;
  range: Range;
  newText: string;
  reason: string;
}

/** The feedback notification (Methods.nextEditFeedback): what the user did with a suggestion or an inline completion. */
export interface NextEditFeedbackParams {
  id: string;
  accepted: boolean;
}

/** TS interface → [schema `$defs` name, its keys]. */
export const WIRE_KEYS = {
  AgentClientOptions: ["AgentClientOptions", keys<AgentClientOptions>()(["protocolVersion", "ui", "forwardsDiagnostics", "clientInfo", "config", "workspaceConfig", "editorQueries", "savesDocuments"])],
  UiCapabilities: ["UiCapabilities", keys<AgentClientOptions["ui"]>()(["chat", "diff", "permissions", "questions", "plan"])],
  AgentServerCapabilities: ["AgentServerCapabilities", keys<AgentServerCapabilities>()(["protocolVersion", "sessions", "revert", "commands", "review", "mentions", "reviewComments", "commitMessage"])],
  SessionNewParams: ["SessionNewParams", keys<SessionNewParams>()(["workspaceFolder", "title", "mode", "model"])],
  SessionNewResult: ["SessionNewResult", keys<SessionNewResult>()(["sessionId", "configOptions"])],
  SessionListParams: ["SessionListParams", keys<SessionListParams>()(["workspaceFolder", "limit", "cursor"])],
  SessionListResult: ["SessionListResult", keys<SessionListResult>()(["sessions", "nextCursor"])],
  SessionSearchParams: ["SessionSearchParams", keys<SessionSearchParams>()(["query", "workspaceFolder", "limit"])],
  SessionSearchHit: ["SessionSearchHit", keys<SessionSearchHit>()(["sessionId", "title", "messageId", "snippet", "updatedAt", "time", "kind"])],
  SessionSearchResult: ["SessionSearchResult", keys<SessionSearchResult>()(["hits"])],
  SessionSummary: ["SessionSummary", keys<SessionSummary>()(["sessionId", "title", "workspaceFolder", "createdAt", "updatedAt", "state", "usage"])],
  SessionLoadParams: ["SessionLoadParams", keys<SessionLoadParams>()(["sessionId", "replay"])],
  SessionLoadResult: ["SessionLoadResult", keys<SessionLoadResult>()(["state", "lastSeq", "configOptions"])],
  SetConfigOptionParams: ["SetConfigOptionParams", keys<SetConfigOptionParams>()(["sessionId", "configId", "value"])],
  ConfigOption: ["ConfigOption", keys<ConfigOption>()(["configId", "name", "category", "type", "currentValue", "options"])],
  ConfigChoice: ["ConfigChoice", keys<ConfigChoice>()(["value", "name", "description"])],
  SessionExportParams: ["SessionExportParams", keys<SessionExportParams>()(["sessionId", "format"])],
  PromptParams: ["PromptParams", keys<PromptParams>()(["sessionId", "prompt", "clientMessageId", "context", "until"])],
  UntilParams: ["UntilParams", keys<UntilParams>()(["command", "maxAttempts", "maxCost"])],
  ImageBlock: ["ImageBlock", keys<ImageBlock>()(["type", "mimeType", "data", "name"])],
  PromptContext: ["PromptContext", keys<PromptContext>()(["activeDocument", "cursor", "selection", "selectedText", "diagnostics"])],
  PromptResult: ["PromptResult", keys<PromptResult>()(["userMessageId", "queued"])],
  Diagnostic: ["Diagnostic", keys<Diagnostic>()(["range", "message", "severity", "source", "code"])],
  DocumentDiagnostics: ["DocumentDiagnostics", keys<DiagnosticsParams["items"][number]>()(["uri", "version", "diagnostics"])],
  DiffGetParams: ["DiffGetParams", keys<DiffGetParams>()(["sessionId", "changeSetId", "uri"])],
  DiffGetResult: ["DiffGetResult", keys<DiffGetResult>()(["uri", "baseText", "proposedText", "patch"])],
  CodeReviewRunParams: ["CodeReviewRunParams", keys<CodeReviewRunParams>()(["workspaceFolder", "staged", "base"])],
  CodeReviewRunResult: ["CodeReviewRunResult", keys<CodeReviewRunResult>()(["findings", "summary"])],
  CodeReviewFinding: ["CodeReviewFinding", keys<CodeReviewFinding>()(["id", "uri", "range", "severity", "message", "related"])],
  ReviewListParams: ["ReviewListParams", keys<ReviewListParams>()(["sessionId"])],
  ReviewListResult: ["ReviewListResult", keys<ReviewListResult>()(["files", "unsentComments"])],
  ReviewFile: ["ReviewFile", keys<ReviewFile>()(["uri", "status", "hunks"])],
  ReviewHunk: ["ReviewHunk", keys<ReviewHunk>()(["hunkId", "status", "messageId", "range", "oldText", "newText", "comments"])],
  ReviewComment: ["ReviewComment", keys<ReviewComment>()(["commentId", "text", "action", "sent"])],
  ReviewCommentParams: ["ReviewCommentParams", keys<ReviewCommentParams>()(["sessionId", "hunkId", "text"])],
  ReviewCommentResult: ["ReviewCommentResult", keys<ReviewCommentResult>()(["commentId"])],
  ReviewSendCommentsResult: ["ReviewSendCommentsResult", keys<ReviewSendCommentsResult>()(["userMessageId", "queued", "sent"])],
  CommitMessageParams: ["CommitMessageParams", keys<CommitMessageParams>()(["uri"])],
  CommitMessageResult: ["CommitMessageResult", keys<CommitMessageResult>()(["message"])],
  ReviewResolveParams: ["ReviewResolveParams", keys<ReviewResolveParams>()(["sessionId", "action", "hunkIds", "uris", "reason"])],
  ReviewResolveResult: ["ReviewResolveResult", keys<ReviewResolveResult>()(["resolved", "conflicts"])],
  ReviewConflict: ["ReviewConflict", keys<ReviewConflict>()(["hunkId", "reason"])],
  RevertStageParams: ["RevertStageParams", keys<RevertStageParams>()(["sessionId", "messageId", "force", "scope"])],
  RevertStageResult: ["RevertStageResult", keys<RevertStageResult>()(["files", "conflicts"])],
  SessionUpdateParams: ["SessionUpdateParams", keys<SessionUpdateParams>()(["sessionId", "seq", "update"])],
  RequestPermissionParams: [
    "RequestPermissionParams",
    keys<RequestPermissionParams>()(["sessionId", "toolCallId", "title", "description", "permission", "patterns", "always", "subject", "options"]),
  ],
  SavedApproval: ["SavedApprovalModel", keys<SavedApproval>()(["scope", "scopeId", "permission", "pattern", "sessionId", "createdAt"])],
  PermissionsListParams: ["PermissionsListParams", keys<PermissionsListParams>()(["workspaceFolder"])],
  PermissionsListResult: ["PermissionsListResult", keys<PermissionsListResult>()(["approvals"])],
  PermissionsRevokeParams: ["PermissionsRevokeParams", keys<PermissionsRevokeParams>()(["scope", "scopeId", "permission", "pattern"])],
  PermissionsRevokeResult: ["PermissionsRevokeResult", keys<PermissionsRevokeResult>()(["revoked"])],
  PermissionOption: ["PermissionOptionModel", keys<PermissionOption>()(["optionId", "name", "kind"])],
  EditSubject: ["EditSubject", keys<Extract<PermissionSubject, { type: "edit" }>>()(["type", "changeSetId", "patch", "files"])],
  CommandSubject: ["CommandSubject", keys<Extract<PermissionSubject, { type: "command" }>>()(["type", "command", "cwd"])],
  FetchSubject: ["FetchSubject", keys<Extract<PermissionSubject, { type: "fetch" }>>()(["type", "url"])],
  AskQuestionParams: ["AskQuestionParams", keys<AskQuestionParams>()(["sessionId", "toolCallId", "questions"])],
  Question: ["QuestionModel", keys<Question>()(["questionId", "header", "question", "options", "multiple", "custom"])],
  CommandTarget: ["CommandTarget", keys<CommandTarget>()(["uri", "range", "diagnostics", "sessionId", "prompt"])],
  CommandSession: ["CommandSession", keys<CommandSession>()(["sessionId"])],
  CommandStarted: ["CommandStarted", keys<CommandStarted>()(["sessionId"])],
  EditorQueryParams: ["EditorQueryParams", keys<EditorQueryParams>()(["sessionId", "kind", "uri", "position", "query"])],
  EditorQueryResult: ["EditorQueryResult", keys<EditorQueryResult>()(["items"])],
  DocumentToSave: ["DocumentToSave", keys<DocumentToSave>()(["uri", "version"])],
  SaveDocumentsParams: ["SaveDocumentsParams", keys<SaveDocumentsParams>()(["documents"])],
  SavedDocument: ["SavedDocument", keys<SavedDocument>()(["uri", "saved", "version", "reason"])],
  SaveDocumentsResult: ["SaveDocumentsResult", keys<SaveDocumentsResult>()(["documents"])],
  MentionBlock: ["MentionBlock", keys<MentionBlock>()(["type", "name", "uri"])],
  UndoResult: ["UndoResult", keys<UndoResult>()(["sessionId", "messageId", "prompt"])],
  NextEditParams: ["NextEditParams", keys<NextEditParams>()(["textDocument", "position"])],
  VersionedDocument: ["VersionedDocument", keys<NextEditParams["textDocument"]>()(["uri", "version"])],
  NextEditResult: ["NextEditResult", keys<NextEditResult>()(["id", "uri", "range", "newText", "reason"])],
  NextEditFeedbackParams: ["NextEditFeedbackParams", keys<NextEditFeedbackParams>()(["id", "accepted"])],
} as const;
