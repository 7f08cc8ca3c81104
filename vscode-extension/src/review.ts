/**
 * The active session's review list (`agent/review/list`), kept fresh for the panel's Changes
 * section and the editor's CodeLenses and gutter marks: fetched again on every `review_update`,
 * when another session becomes active, after a resolve, and when the editor asks (a reviewed
 * document changed). Refreshes run one at a time and a request during one runs once after it, so
 * a burst of updates (a session replay) costs two fetches, not one per update. It knows nothing
 * of VS Code, so it is unit-tested with a fake connection.
 */
import {
  Methods,
  type ReviewAction,
  type ReviewCommentParams,
  type ReviewListResult,
  type ReviewSendCommentsResult,
  type ReviewResolveParams,
  type ReviewResolveResult,
} from "./shared/protocol";
import type { ReviewSnapshot } from "./shared/review";
import type { Connection, SessionStore } from "./sessions";

type Listener = (review: ReviewSnapshot | undefined) => void;

export class ReviewStore {
  private current?: ReviewSnapshot;
  private running?: Promise<void>;
  private again = false;
  private followed?: string;
  private readonly listeners = new Set<Listener>();
  private readonly subscription: { dispose(): void };

  /**
   * @param connection the server, when it runs
   * @param supported whether the server has `agent/review/*` (`capabilities.experimental.agent.review`)
   */
  constructor(
    private readonly store: SessionStore,
    private readonly connection: () => Connection | undefined,
    private readonly supported: () => boolean,
  ) {
    this.subscription = store.onMessage((msg) => {
      if (msg.type === "update" && msg.params.update.sessionUpdate === "review_update") void this.refresh();
      else if (msg.type === "state" && store.activeId !== this.followed) void this.refresh();
      else if (msg.type === "server") {
        if (msg.server.status === "running") void this.refresh();
        else this.set(undefined);
      }
    });
  }

  onChange(listener: Listener): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** The active session's list as last fetched (undefined: no session, or a server without review). */
  snapshot(): ReviewSnapshot | undefined {
    return this.current;
  }

  private set(review: ReviewSnapshot | undefined): void {
    this.current = review;
    for (const l of this.listeners) l(review);
  }

  /** Fetches the active session's list again (one fetch at a time; a request meanwhile runs once after). */
  refresh(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          await this.fetch();
        } while (this.again);
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  private async fetch(): Promise<void> {
    const sessionId = this.store.activeId;
    this.followed = sessionId;
    const conn = this.connection();
    if (!sessionId || !conn || !this.supported()) {
      if (this.current) this.set(undefined);
      return;
    }
    try {
      const result = await conn.request<ReviewListResult>(Methods.reviewList.name, { sessionId });
      // the active session changed meanwhile: the next round fetches that one
      if (this.store.activeId === sessionId) this.set({ sessionId, files: result.files, ...(result.unsentComments ? { unsentComments: result.unsentComments } : {}) });
      else this.again = true;
    } catch {
      // a session this server does not know (yet), or a stopping server: nothing to review
      if (this.store.activeId === sessionId) this.set({ sessionId, files: [] });
    }
  }

  /** Keeps or undoes hunks of the active session (`hunkIds` ∪ `uris`; neither: every pending one). */
  async resolve(action: ReviewAction, selection: { hunkIds?: string[]; uris?: string[]; reason?: string } = {}): Promise<ReviewResolveResult> {
    const sessionId = this.store.activeId;
    if (!sessionId) throw new Error("no active session");
    // a server still starting: wait for it (the store fails with the reason of a failed start)
    const conn = this.connection() ?? (await this.store.connected());
    const params: ReviewResolveParams = { sessionId, action };
    if (selection.hunkIds?.length) params.hunkIds = selection.hunkIds;
    if (selection.uris?.length) params.uris = selection.uris;
    if (selection.reason?.trim()) params.reason = selection.reason.trim();
    if (!params.hunkIds && !params.uris && (selection.hunkIds || selection.uris)) return { resolved: [], conflicts: [] };
    const result = await conn.request<ReviewResolveResult>(Methods.reviewResolve.name, params);
    await this.refresh();
    return result;
  }

  /** A comment on a hunk of the active session; it goes to the agent with the next prompt. */
  async comment(hunkId: string, text: string): Promise<void> {
    const sessionId = this.store.activeId;
    if (!sessionId) throw new Error("no active session");
    if (!text.trim()) return;
    const conn = this.connection() ?? (await this.store.connected());
    const params: ReviewCommentParams = { sessionId, hunkId, text: text.trim() };
    await conn.request(Methods.reviewComment.name, params);
    await this.refresh();
  }

  /** The active session's comments not sent yet, as a prompt of their own now. */
  async sendComments(): Promise<ReviewSendCommentsResult> {
    const sessionId = this.store.activeId;
    if (!sessionId) throw new Error("no active session");
    const conn = this.connection() ?? (await this.store.connected());
    const result = await conn.request<ReviewSendCommentsResult>(Methods.reviewSendComments.name, { sessionId });
    await this.refresh();
    return result;
  }

  dispose(): void {
    this.subscription.dispose();
    this.listeners.clear();
  }
}

/** "2 changes could not be undone: hnk_1: changed since; …" (undefined when there is no conflict). */
export function conflictMessage(action: ReviewAction, result: ReviewResolveResult): string | undefined {
  const n = result.conflicts.length;
  if (!n) return undefined;
  const reasons = result.conflicts.map((c) => c.reason).filter((r, i, all) => all.indexOf(r) === i);
  return `${n} change${n === 1 ? "" : "s"} could not be ${action === "undo" ? "undone" : "kept"}: ${reasons.join("; ")}`;
}

/** What is left to review in a session (the Changes section and the editor show only the active one's). */
export interface Waiting { hunks: number; files: number }

/** `sessionId`'s pending hunks in `review` (undefined: none, or the list is another session's). */
export function waitingReview(review: ReviewSnapshot | undefined, sessionId: string | undefined): Waiting | undefined {
  if (!review || !sessionId || review.sessionId !== sessionId) return undefined;
  const files = review.files.filter((f) => f.hunks.some((h) => h.status === "pending"));
  const hunks = files.reduce((n, f) => n + f.hunks.filter((h) => h.status === "pending").length, 0);
  return hunks ? { hunks, files: files.length } : undefined;
}

/** "2 changes in 1 file" */
export function waitingText(w: Waiting): string {
  return `${w.hunks} change${w.hunks === 1 ? "" : "s"} in ${w.files} file${w.files === 1 ? "" : "s"}`;
}
