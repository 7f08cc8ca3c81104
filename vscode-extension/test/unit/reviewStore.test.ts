/** The host's review list with a fake server: refreshed on review_update, per session, coalesced; resolve; rewind. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { conflictMessage, ReviewStore, waitingReview, waitingText } from "../../src/review";
import { SessionStore, type Connection } from "../../src/sessions";
import type { ReviewFile, SessionUpdate, SessionUpdateParams } from "../../src/shared/protocol";
import type { ReviewSnapshot } from "../../src/shared/review";

const S = "ses_1";
const T = "ses_2";
const file = (status: ReviewFile["hunks"][number]["status"]): ReviewFile => ({
  uri: "file:///w/a.py",
  status,
  hunks: [{ hunkId: "hnk_1", status, messageId: "u1", range: { start: { line: 0, character: 0 }, end: { line: 1, character: 0 } }, oldText: "a\n", newText: "b\n" }],
});

/** A server stand-in with one review list per session; list answers wait until `release()` when held. */
class FakeServer implements Connection {
  readonly requests: { method: string; params: any }[] = [];
  readonly logs = new Map<string, SessionUpdateParams[]>();
  readonly lists = new Map<string, ReviewFile[]>();
  store!: SessionStore;
  private held: (() => void)[] = [];
  hold = false;
  unsent = 0;

  add(sessionId: string, update: SessionUpdate): SessionUpdateParams {
    const log = this.logs.get(sessionId) ?? [];
    this.logs.set(sessionId, log);
    const params = { sessionId, seq: log.length + 1, update };
    log.push(params);
    return params;
  }

  release(): void {
    const held = this.held;
    this.held = [];
    for (const r of held) r();
  }

  lists_(): string[] {
    return this.requests.filter((r) => r.method === "agent/review/list").map((r) => r.params.sessionId);
  }

  async request<R>(method: string, params: any): Promise<R> {
    this.requests.push({ method, params });
    await Promise.resolve();
    if (method === "agent/session/load") {
      for (const u of this.logs.get(params.sessionId) ?? []) this.store.handleUpdate(u);
      return { state: "idle", lastSeq: this.logs.get(params.sessionId)?.length ?? 0, configOptions: [] } as R;
    }
    if (method === "agent/session/list") return { sessions: [] } as R;
    if (method === "agent/review/list") {
      if (this.hold) await new Promise<void>((r) => this.held.push(r));
      return { files: this.lists.get(params.sessionId) ?? [], ...(this.unsent ? { unsentComments: this.unsent } : {}) } as R;
    }
    if (method === "agent/review/comment") {
      this.unsent++;
      return { commentId: `cmt_${this.unsent}` } as R;
    }
    if (method === "agent/review/sendComments") {
      const sent = this.unsent;
      this.unsent = 0;
      return { userMessageId: sent ? "msg_9" : null, queued: false, sent } as R;
    }
    if (method === "agent/review/resolve") {
      const files = this.lists.get(params.sessionId) ?? [];
      const ids = files.flatMap((f) => f.hunks).filter((h) => h.status === "pending").map((h) => h.hunkId);
      this.lists.set(params.sessionId, [file(params.action === "keep" ? "kept" : "undone")]);
      return { resolved: ids, conflicts: [] } as R;
    }
    if (method === "agent/revert/stage") return { files: ["file:///w/a.py"], conflicts: [] } as R;
    throw new Error(`unexpected ${method}`);
  }

  notify(): void {}
}

const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 0));
};

async function setup(supported = true) {
  const server = new FakeServer();
  const store = new SessionStore(() => "file:///w");
  server.store = store;
  let connected: Connection | undefined = server;
  const reviews = new ReviewStore(store, () => connected, () => supported);
  const seen: (ReviewSnapshot | undefined)[] = [];
  reviews.onChange((r) => seen.push(r));
  await store.attach(server);
  await settle();
  return { server, store, reviews, seen, disconnect: () => (connected = undefined) };
}

const reviewUpdate = (pending: number): SessionUpdate => ({
  sessionUpdate: "review_update",
  files: [{ uri: "file:///w/a.py", status: "pending", pending, kept: 0, undone: 0 }],
});

describe("ReviewStore", () => {
  it("fetches the list of a session when it becomes active, and again on each review_update", async () => {
    const { server, store, reviews } = await setup();
    server.lists.set(S, [file("pending")]);
    await store.open(S);
    await settle();
    assert.deepEqual(reviews.snapshot(), { sessionId: S, files: [file("pending")] });
    const before = server.lists_().length;
    server.lists.set(S, [file("undone")]);
    store.handleUpdate(server.add(S, reviewUpdate(0)));
    await settle();
    assert.equal(server.lists_().length, before + 1);
    assert.deepEqual(reviews.snapshot()?.files, [file("undone")]);
  });

  it("follows the active session: another session's list replaces it", async () => {
    const { server, store, reviews } = await setup();
    server.lists.set(S, [file("pending")]);
    server.lists.set(T, []);
    await store.open(S);
    await settle();
    await store.open(T);
    await settle();
    assert.deepEqual(reviews.snapshot(), { sessionId: T, files: [] });
  });

  it("a review_update of a session that is not shown fetches nothing", async () => {
    const { server, store } = await setup();
    await store.open(S);
    await settle();
    const before = server.lists_().length;
    store.handleUpdate(server.add(T, reviewUpdate(1)));
    await settle();
    assert.equal(server.lists_().length, before);
  });

  it("a burst of updates (a replay) costs one fetch in flight and one after it, not one each", async () => {
    const { server, store, reviews } = await setup();
    for (let i = 0; i < 10; i++) server.add(S, reviewUpdate(i));
    server.lists.set(S, [file("pending")]);
    server.hold = true;
    const opened = store.open(S);
    await settle();
    server.hold = false;
    server.release();
    await opened;
    await settle();
    const lists = server.lists_();
    assert.ok(lists.length <= 3, `fetched ${lists.length} times`);
    assert.deepEqual(reviews.snapshot()?.files, [file("pending")]);
  });

  it("an answer for a session that is no longer active is dropped, and the active one is fetched", async () => {
    const { server, store, reviews } = await setup();
    server.lists.set(S, [file("pending")]);
    server.lists.set(T, [file("kept")]);
    server.hold = true;
    await store.open(S);
    await settle();
    await store.open(T);
    server.hold = false;
    server.release();
    await settle();
    assert.deepEqual(reviews.snapshot(), { sessionId: T, files: [file("kept")] });
  });

  it("nothing to review without a server that supports it, or once the server stops", async () => {
    const unsupported = await setup(false);
    await unsupported.store.open(S);
    await settle();
    assert.equal(unsupported.reviews.snapshot(), undefined);
    assert.deepEqual(unsupported.server.lists_(), []);

    const { server, store, reviews, seen } = await setup();
    server.lists.set(S, [file("pending")]);
    await store.open(S);
    await settle();
    assert.ok(reviews.snapshot());
    store.detach({ status: "stopped" });
    assert.equal(reviews.snapshot(), undefined);
    assert.equal(seen.at(-1), undefined);
  });

  it("resolve sends the selection of the active session, then shows the list after it", async () => {
    const { server, store, reviews } = await setup();
    server.lists.set(S, [file("pending")]);
    await store.open(S);
    await settle();
    const result = await reviews.resolve("undo", { hunkIds: ["hnk_1"] });
    assert.deepEqual(result, { resolved: ["hnk_1"], conflicts: [] });
    assert.deepEqual(server.requests.find((r) => r.method === "agent/review/resolve")?.params, { sessionId: S, action: "undo", hunkIds: ["hnk_1"] });
    assert.deepEqual(reviews.snapshot()?.files, [file("undone")]);

    await reviews.resolve("keep");
    assert.deepEqual(server.requests.filter((r) => r.method === "agent/review/resolve").at(-1)?.params, { sessionId: S, action: "keep" }, "neither hunkIds nor uris: all");
    await reviews.resolve("keep", { uris: ["file:///w/a.py"] });
    assert.deepEqual(server.requests.filter((r) => r.method === "agent/review/resolve").at(-1)?.params, { sessionId: S, action: "keep", uris: ["file:///w/a.py"] });
  });

  it("a reason goes with the resolve; a comment, then Send comments, each show the count after", async () => {
    const { server, store, reviews } = await setup();
    server.lists.set(S, [file("pending")]);
    await store.open(S);
    await settle();
    await reviews.resolve("undo", { hunkIds: ["hnk_1"], reason: "  wrong file  " });
    assert.deepEqual(server.requests.find((r) => r.method === "agent/review/resolve")?.params, { sessionId: S, action: "undo", hunkIds: ["hnk_1"], reason: "wrong file" });
    await reviews.comment("hnk_1", " use a constant ");
    assert.deepEqual(server.requests.find((r) => r.method === "agent/review/comment")?.params, { sessionId: S, hunkId: "hnk_1", text: "use a constant" });
    assert.equal(reviews.snapshot()?.unsentComments, 1);
    await reviews.comment("hnk_1", "   ");
    assert.equal(server.requests.filter((r) => r.method === "agent/review/comment").length, 1, "a blank comment is not sent");
    assert.deepEqual(await reviews.sendComments(), { userMessageId: "msg_9", queued: false, sent: 1 });
    assert.deepEqual(server.requests.find((r) => r.method === "agent/review/sendComments")?.params, { sessionId: S });
    assert.equal(reviews.snapshot()?.unsentComments, undefined);
  });

  it("resolve with an empty selection resolves nothing (never everything)", async () => {
    const { server, store, reviews } = await setup();
    await store.open(S);
    await settle();
    assert.deepEqual(await reviews.resolve("undo", { hunkIds: [] }), { resolved: [], conflicts: [] });
    assert.equal(server.requests.filter((r) => r.method === "agent/review/resolve").length, 0);
  });

  it("resolve without a session, or on a server that failed to start, fails with why", async () => {
    const { reviews, store, disconnect } = await setup();
    await assert.rejects(reviews.resolve("keep"), /no active session/);
    await store.open(S);
    disconnect();
    store.detach({ status: "failed", message: "lsp-agent failed to start: no provider" });
    await assert.rejects(reviews.resolve("keep"), /failed to start: no provider/);
  });
});

describe("conflictMessage", () => {
  it("says how many changes stayed and why, each reason once", () => {
    assert.equal(conflictMessage("undo", { resolved: [], conflicts: [] }), undefined);
    assert.equal(
      conflictMessage("undo", { resolved: ["a"], conflicts: [{ hunkId: "b", reason: "changed since" }, { hunkId: "c", reason: "changed since" }] }),
      "2 changes could not be undone: changed since",
    );
  });
});

describe("SessionStore.rewind", () => {
  it("stages a revert with the scope (both: no scope, as before) and force when asked", async () => {
    const { server, store } = await setup();
    await store.open(S);
    await store.rewind("u1", "code");
    await store.rewind("u1", "conversation", true);
    await store.rewind("u1", "both");
    assert.deepEqual(
      server.requests.filter((r) => r.method === "agent/revert/stage").map((r) => r.params),
      [
        { sessionId: S, messageId: "u1", scope: "code" },
        { sessionId: S, messageId: "u1", scope: "conversation", force: true },
        { sessionId: S, messageId: "u1" },
      ],
    );
  });
});

describe("the changes a new session would take out of view", () => {
  const review = (sessionId: string, ...files: ReviewFile[]): ReviewSnapshot => ({ sessionId, files });
  const other = { ...file("pending"), uri: "file:///w/b.py" };
  const two = { ...file("pending"), hunks: [...file("pending").hunks, { ...file("pending").hunks[0], hunkId: "hnk_2" }, { ...file("kept").hunks[0], hunkId: "hnk_3" }] };

  it("counts the shown session's pending hunks and their files", () => {
    assert.deepEqual(waitingReview(review(S, two, other, file("kept")), S), { hunks: 3, files: 2 });
    assert.equal(waitingText({ hunks: 3, files: 2 }), "3 changes in 2 files");
    assert.equal(waitingText({ hunks: 1, files: 1 }), "1 change in 1 file");
  });

  it("is nothing when all are kept or undone, when there is no session, or the list is another session's", () => {
    assert.equal(waitingReview(review(S, file("kept"), file("undone")), S), undefined);
    assert.equal(waitingReview(review(S, file("pending")), undefined), undefined);
    assert.equal(waitingReview(review(S, file("pending")), T), undefined);
    assert.equal(waitingReview(undefined, S), undefined);
  });
});

