/**
 * The sessions this window follows: one `SessionView` per session, built by the shared reducer from
 * `agent/session/update`, plus the pending permission and question requests. It knows nothing of
 * VS Code (the panel, the status bar and the commands listen to it), so it is unit-tested with a
 * fake connection.
 */
import {
  Methods,
  type AskQuestionParams,
  type AskQuestionResult,
  type ConfigOption,
  type ContentBlock,
  type PromptParams,
  type PromptResult,
  type RequestPermissionParams,
  type RequestPermissionResult,
  type RevertScope,
  type RevertStageParams,
  type RevertStageResult,
  type SessionListResult,
  type SessionLoadResult,
  type SessionNewParams,
  type SessionNewResult,
  type SessionSearchHit,
  type SessionSearchParams,
  type SessionSearchResult,
  type SessionSummary,
  type SessionUpdateParams,
  type UntilParams,
  type ConfigOptionsResult,
} from "./shared/protocol";
import {
  applyUpdate,
  emptySession,
  type ChatState,
  type HostMessage,
  type PendingPermission,
  type PendingQuestion,
  type ServerStatus,
  type SessionView,
} from "./shared/reducer";
import type { FocusChip } from "./shared/focus";
import { StartGate } from "./startGate";

export interface Connection {
  request<R>(method: string, params: unknown): Promise<R>;
  notify(method: string, params: unknown): void;
}

type Listener = (msg: HostMessage) => void;

interface Pending<T, R> {
  entry: T;
  resolve: (result: R) => void;
}

const MAX_RESYNC_ROUNDS = 3;

export class SessionStore {
  private readonly views = new Map<string, SessionView>();
  private readonly resyncing = new Set<string>();
  private readonly permissions = new Map<string, Pending<PendingPermission, RequestPermissionResult>>();
  private readonly questions = new Map<string, Pending<PendingQuestion, AskQuestionResult>>();
  private readonly listeners = new Set<Listener>();
  private connection?: Connection;
  /** Requests wait here while the server starts (never "not running"); see startGate.ts. */
  private readonly gate = new StartGate<Connection>(() => this.startServer());
  private server: ServerStatus = { status: "starting" };
  private sessions: SessionSummary[] = [];
  private nextKey = 1;
  private focus?: FocusChip;
  /** What a new session starts with (`agent/config/options`), with the user's picks before it. */
  private newSessionOptions: ConfigOption[] = [];
  /** The mode or model the user picked before a session: the next new session starts with them. */
  private picked: { mode?: string; model?: string } = {};
  activeId?: string;
  /** Starts the server when a request waits on a stopped one (the client sets it). */
  startServer: () => void = () => undefined;

  constructor(private readonly folder: () => string | undefined = () => undefined) {}

  onMessage(listener: Listener): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  private emit(msg: HostMessage): void {
    for (const l of this.listeners) l(msg);
  }

  /** The whole state of the panel (sent when the webview says `ready`, or after a resync). */
  snapshot(): ChatState {
    return {
      server: this.server,
      sessions: this.sessions,
      session: this.active(),
      permissions: [...this.permissions.values()].map((p) => p.entry),
      questions: [...this.questions.values()].map((q) => q.entry),
      focus: this.focus,
      configOptions: this.newSessionOptions,
    };
  }

  active(): SessionView | undefined {
    return this.activeId ? this.views.get(this.activeId) : undefined;
  }

  view(sessionId: string): SessionView | undefined {
    return this.views.get(sessionId);
  }

  private emitState(): void {
    this.emit({ type: "state", state: this.snapshot() });
  }

  // -- the server ------------------------------------------------------------------------------

  /**
   * A (re)started server: follow the active session again from where this window is. `status`:
   * what to show meanwhile ("starting" while the server still builds its agent: requests are
   * sent, and it answers them once it is up).
   */
  async attach(connection: Connection, status: ServerStatus = { status: "running" }): Promise<void> {
    this.connection = connection;
    this.gate.ready(connection);
    this.setServer(status);
    await this.refreshSessions().catch(() => undefined);
    await this.refreshNewSessionOptions();
    const active = this.active();
    if (active) await this.resync(active.sessionId, active.lastSeq + 1).catch(() => undefined);
  }

  /**
   * The server is gone (`stopped`), being restarted (`starting`: requests wait for it) or could not
   * start (`failed`: requests fail with `message`).
   */
  detach(status: ServerStatus): void {
    this.connection = undefined;
    if (status.status === "failed") this.gate.failed(status.message ?? "the LSP Agent server failed to start");
    else if (status.status === "starting") this.gate.starting();
    else this.gate.stopped(status.message ?? "the LSP Agent server stopped");
    for (const [key, p] of this.permissions) {
      p.resolve({ outcome: { outcome: "cancelled" } });
      this.permissions.delete(key);
    }
    for (const [key, q] of this.questions) {
      q.resolve({ outcome: "cancelled" });
      this.questions.delete(key);
    }
    this.setServer(status);
  }

  setServer(server: ServerStatus): void {
    // a start under way: requests queue (with a connection, they are sent and the server holds them)
    if (server.status === "starting" && !this.connection && this.gate.state !== "starting") this.gate.starting();
    this.server = server;
    this.emit({ type: "server", server });
    if (server.status !== "running") this.emitState();
  }

  get serverStatus(): ServerStatus {
    return this.server;
  }

  /** The connection once the server is up: waits while it starts, starts a stopped one, fails with the reason of a failed start. */
  connected(): Promise<Connection> {
    return this.gate.wait();
  }

  // -- updates ---------------------------------------------------------------------------------

  /** `agent/session/update` from the server. */
  handleUpdate(params: SessionUpdateParams): void {
    const view = this.views.get(params.sessionId) ?? emptySession(params.sessionId);
    if (!this.views.has(params.sessionId)) this.views.set(params.sessionId, view);
    const result = applyUpdate(view, params);
    if (result.resync) {
      // during a resync, out-of-step live updates are expected: the reload covers them
      if (!this.resyncing.has(params.sessionId)) void this.resync(params.sessionId, result.resync.fromSeq);
      return;
    }
    this.views.set(params.sessionId, result.session);
    if (params.sessionId === this.activeId) this.emit({ type: "update", params });
    const u = params.update;
    if (u.sessionUpdate === "session_info_update" || u.sessionUpdate === "state_update") this.touchSummary(result.session);
  }

  /** Reloads a session's events from `fromSeq` (a gap, a repeat, a restart or a reload). */
  async resync(sessionId: string, fromSeq: number): Promise<void> {
    if (this.resyncing.has(sessionId)) return;
    this.resyncing.add(sessionId);
    try {
      for (let round = 0; round < MAX_RESYNC_ROUNDS; round++) {
        const view = this.views.get(sessionId) ?? emptySession(sessionId);
        this.views.set(sessionId, view);
        const from = round === 0 ? Math.min(fromSeq, view.lastSeq + 1) : view.lastSeq + 1;
        const result = await (await this.connected()).request<SessionLoadResult>(Methods.sessionLoad.name, {
          sessionId,
          replay: from <= 1 ? "full" : { fromSeq: from },
        });
        const after = this.views.get(sessionId)!;
        this.views.set(sessionId, { ...after, state: result.state, configOptions: result.configOptions });
        if (after.lastSeq >= result.lastSeq) break;
      }
    } finally {
      this.resyncing.delete(sessionId);
    }
    if (sessionId === this.activeId) this.emitState();
  }

  // -- sessions --------------------------------------------------------------------------------

  async refreshSessions(): Promise<SessionSummary[]> {
    const folder = this.folder();
    const result = await (await this.connected()).request<SessionListResult>(Methods.sessionList.name, folder ? { workspaceFolder: folder } : {});
    this.sessions = result.sessions;
    this.emit({ type: "sessions", sessions: this.sessions });
    return this.sessions;
  }

  /**
   * The pickers' choices before a session (`agent/config/options`): the server's modes and models
   * and what a new session starts with; a choice the user made meanwhile stays (an older server
   * without the method: none).
   */
  private async refreshNewSessionOptions(): Promise<void> {
    try {
      const result = await (await this.connected()).request<ConfigOptionsResult>(Methods.configOptions.name, {});
      this.newSessionOptions = result.configOptions.map((o) => {
        const value = o.configId === "mode" || o.configId === "model" ? this.picked[o.configId] : undefined;
        return value !== undefined && o.options.some((c) => c.value === value) ? { ...o, currentValue: value } : o;
      });
    } catch {
      this.newSessionOptions = [];
    }
    this.emitState();
  }

  /** `agent/session/search`: messages matching `query`, best first; this folder's unless `everywhere`. */
  async search(query: string, options: { everywhere?: boolean; limit?: number } = {}): Promise<SessionSearchHit[]> {
    const params: SessionSearchParams = { query };
    const folder = this.folder();
    if (folder && !options.everywhere) params.workspaceFolder = folder;
    if (options.limit) params.limit = options.limit;
    const result = await (await this.connected()).request<SessionSearchResult>(Methods.sessionSearch.name, params);
    return result.hits;
  }

  private touchSummary(view: SessionView): void {
    const index = this.sessions.findIndex((s) => s.sessionId === view.sessionId);
    if (index < 0) return;
    const sessions = this.sessions.slice();
    sessions[index] = { ...sessions[index], title: view.title || sessions[index].title, state: view.state };
    this.sessions = sessions;
    this.emit({ type: "sessions", sessions });
  }

  /** A new session, in the mode and model the user picked before it, else the server's defaults. */
  async newSession(): Promise<string> {
    const folder = this.folder();
    const params: SessionNewParams = { ...(folder ? { workspaceFolder: folder } : {}), ...this.picked };
    const result = await (await this.connected()).request<SessionNewResult>(Methods.sessionNew.name, params);
    const view = this.views.get(result.sessionId) ?? emptySession(result.sessionId);
    this.views.set(result.sessionId, { ...view, configOptions: result.configOptions });
    this.activeId = result.sessionId;
    this.picked = {};
    this.emitState();
    void this.refreshSessions().catch(() => undefined);
    return result.sessionId;
  }

  /** Shows a session: loads its whole history unless this window already follows it. */
  async open(sessionId: string): Promise<void> {
    this.activeId = sessionId;
    const view = this.views.get(sessionId);
    if (!view || view.lastSeq === 0) {
      this.views.set(sessionId, emptySession(sessionId, this.sessions.find((s) => s.sessionId === sessionId)?.title));
      this.emitState();
      await this.resync(sessionId, 1);
    } else {
      this.emitState();
    }
  }

  /** Makes a session active without loading it (one this window just started, e.g. by a code action). */
  follow(sessionId: string): void {
    if (!this.views.has(sessionId)) this.views.set(sessionId, emptySession(sessionId));
    this.activeId = sessionId;
    this.emitState();
    void this.refreshSessions().catch(() => undefined);
  }

  /**
   * Sends a prompt: its text first, then the blocks of its mentions (docs/protocol.md "Mentions")
   * and images; `until`: work until that command passes ("Until green").
   */
  async prompt(text: string, context?: PromptParams["context"], mentions: ContentBlock[] = [], until?: UntilParams): Promise<PromptResult> {
    const sessionId = this.activeId ?? (await this.newSession());
    const prompt: ContentBlock[] = [{ type: "text", text }, ...mentions];
    const params: PromptParams = { sessionId, prompt, clientMessageId: `vsc-${Date.now().toString(36)}-${this.nextKey++}` };
    if (context) params.context = context;
    if (until) params.until = until;
    return (await this.connected()).request<PromptResult>(Methods.sessionPrompt.name, params);
  }

  /** "Compact now" (the context gauge past 80 %): `agent/session/compact`, answered when it has ended. */
  async compact(): Promise<void> {
    const sessionId = this.activeId;
    if (!sessionId) throw new Error("no session");
    await (await this.connected()).request<unknown>(Methods.sessionCompact.name, { sessionId });
  }

  /** The focus chip the panel shows (undefined: no focus is sent). */
  setFocus(focus: FocusChip | undefined): void {
    if (JSON.stringify(focus) === JSON.stringify(this.focus)) return;
    this.focus = focus;
    this.emit({ type: "focus", focus });
  }

  cancel(sessionId = this.activeId): void {
    // nothing runs on a server that is not up
    if (sessionId) this.connection?.notify(Methods.sessionCancel.name, { sessionId });
  }

  /** The session's mode or model; before a session, the one the next new session starts with. */
  async setConfigOption(configId: "mode" | "model", value: string): Promise<ConfigOption[]> {
    const sessionId = this.activeId;
    if (!sessionId) {
      const option = this.newSessionOptions.find((o) => o.configId === configId);
      if (!option?.options.some((c) => c.value === value)) throw new Error(`no ${configId} ${value} to start a session with`);
      this.picked[configId] = value;
      this.newSessionOptions = this.newSessionOptions.map((o) => (o === option ? { ...o, currentValue: value } : o));
      this.emitState();
      return this.newSessionOptions;
    }
    const result = await (await this.connected()).request<ConfigOptionsResult>(Methods.sessionSetConfigOption.name, { sessionId, configId, value });
    const view = this.views.get(sessionId);
    if (view) this.views.set(sessionId, { ...view, configOptions: result.configOptions });
    if (sessionId === this.activeId) this.emitState();
    return result.configOptions;
  }

  /**
   * "Rewind…" on a user message: stages a revert to before it (`agent/revert/stage`) with a scope:
   * the files and the conversation (`both`, sent as no scope, as every server understands it), the
   * files only, or the conversation only. Redo (a revert clear) takes it back.
   */
  async rewind(messageId: string, scope: RevertScope, force = false): Promise<RevertStageResult> {
    const sessionId = this.activeId;
    if (!sessionId) throw new Error("no session");
    const params: RevertStageParams = { sessionId, messageId };
    if (scope !== "both") params.scope = scope;
    if (force) params.force = true;
    return (await this.connected()).request<RevertStageResult>(Methods.revertStage.name, params);
  }

  setDraft(text: string): void {
    this.emit({ type: "draft", text });
  }

  // -- permission and questions ----------------------------------------------------------------

  /** `agent/session/requestPermission`: resolves when the user answers in the panel. */
  requestPermission(params: RequestPermissionParams, onCancel?: (cancel: () => void) => void): Promise<RequestPermissionResult> {
    const key = `p${this.nextKey++}`;
    return new Promise((resolve) => {
      const entry = { key, params };
      this.permissions.set(key, { entry, resolve });
      this.showSessionOf(params.sessionId);
      this.emit({ type: "permission", request: entry });
      onCancel?.(() => this.answerPermission(key, { outcome: { outcome: "cancelled" } }));
    });
  }

  pendingPermission(key: string): PendingPermission | undefined {
    return this.permissions.get(key)?.entry;
  }

  answerPermission(key: string, result: RequestPermissionResult): void {
    const pending = this.permissions.get(key);
    if (!pending) return;
    this.permissions.delete(key);
    pending.resolve(result);
    this.emit({ type: "requestDone", key });
  }

  /** `agent/session/askQuestion`: resolves when the user answers in the panel. */
  askQuestion(params: AskQuestionParams, onCancel?: (cancel: () => void) => void): Promise<AskQuestionResult> {
    const key = `q${this.nextKey++}`;
    return new Promise((resolve) => {
      const entry = { key, params };
      this.questions.set(key, { entry, resolve });
      this.showSessionOf(params.sessionId);
      this.emit({ type: "question", request: entry });
      onCancel?.(() => this.answerQuestion(key, { outcome: "cancelled" }));
    });
  }

  answerQuestion(key: string, result: AskQuestionResult): void {
    const pending = this.questions.get(key);
    if (!pending) return;
    this.questions.delete(key);
    pending.resolve(result);
    this.emit({ type: "requestDone", key });
  }

  private showSessionOf(sessionId: string): void {
    if (this.activeId !== sessionId) {
      if (!this.views.has(sessionId)) this.views.set(sessionId, emptySession(sessionId));
      this.activeId = sessionId;
      this.emitState();
    }
  }
}
