/** "Search Sessions": the request the store sends, the live search's pause and latest-wins, and the rows. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LiveSearch, searchItem, type SearchItem } from "../../src/sessionSearch";
import { SessionStore, type Connection } from "../../src/sessions";
import type { SessionSearchHit } from "../../src/shared/protocol";

const hit = (sessionId: string, snippet = "the vault\ncode  here"): SessionSearchHit => ({
  sessionId,
  title: `title of ${sessionId}`,
  messageId: `msg_${sessionId}`,
  snippet,
  updatedAt: "2026-11-30T10:45:02.456Z",
  kind: "tool_output",
});

class FakeServer implements Connection {
  readonly requests: { method: string; params: any }[] = [];
  async request<R>(method: string, params: any): Promise<R> {
    this.requests.push({ method, params });
    if (method === "agent/session/list") return { sessions: [] } as R;
    if (method === "agent/session/search") return { hits: [hit("ses_1")] } as R;
    throw new Error(`unexpected ${method}`);
  }
  notify(): void {}
}

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

function recorder() {
  const shown: { items: SearchItem[]; query: string }[] = [];
  const failures: string[] = [];
  const busy: boolean[] = [];
  return { shown, failures, busy, view: { busy: (on: boolean) => busy.push(on), show: (items: SearchItem[], query: string) => shown.push({ items, query }), fail: (m: string) => failures.push(m) } };
}

describe("SessionStore.search", () => {
  it("asks for this folder's sessions, or every workspace's", async () => {
    const server = new FakeServer();
    const store = new SessionStore(() => "file:///w");
    await store.attach(server);
    assert.deepEqual(await store.search("vault"), [hit("ses_1")]);
    await store.search("vault", { everywhere: true, limit: 5 });
    const searches = server.requests.filter((r) => r.method === "agent/session/search").map((r) => r.params);
    assert.deepEqual(searches, [{ query: "vault", workspaceFolder: "file:///w" }, { query: "vault", limit: 5 }]);
  });
});

describe("LiveSearch", () => {
  it("searches once after the typing pauses, for the latest text", async () => {
    const queries: string[] = [];
    const r = recorder();
    const live = new LiveSearch(async (q) => (queries.push(q), [hit("ses_1")]), r.view, 20);
    live.update("va");
    live.update("vau");
    live.update("vault");
    await wait(60);
    assert.deepEqual(queries, ["vault"]);
    assert.deepEqual(r.shown.map((s) => [s.query, s.items.map((i) => i.sessionId)]), [["vault", ["ses_1"]]]);
    assert.deepEqual(r.busy, [true, false]);
  });

  it("drops the answer to an older query that comes back late", async () => {
    const r = recorder();
    const live = new LiveSearch(async (q) => {
      await wait(q === "slow" ? 60 : 1);
      return [hit(q)];
    }, r.view, 0);
    live.update("slow");
    await wait(10);
    live.update("fast");
    await wait(100);
    assert.deepEqual(r.shown.map((s) => s.items.map((i) => i.sessionId)), [["fast"]]);
  });

  it("clears without asking for an empty box, and shows the server's message on an error", async () => {
    const r = recorder();
    let asked = 0;
    const live = new LiveSearch(async () => {
      asked++;
      throw new Error("query: nothing to search for in '*': give at least one word");
    }, r.view, 0);
    live.update("   ");
    assert.equal(asked, 0);
    assert.deepEqual(r.shown, [{ items: [], query: "   " }]);
    live.update("*");
    await wait(20);
    assert.deepEqual(r.failures, ["query: nothing to search for in '*': give at least one word"]);
    live.dispose();
  });
});

describe("searchItem", () => {
  it("is the snippet on one line, what matched and when, and the session's title; always shown", () => {
    const item = searchItem(hit("ses_9"));
    assert.equal(item.label, "the vault code here");
    assert.match(item.description, /^a tool printed · /);
    assert.equal(item.detail, "title of ses_9");
    assert.equal(item.alwaysShow, true);
    assert.deepEqual([item.sessionId, item.messageId], ["ses_9", "msg_ses_9"]);
    assert.equal(searchItem({ ...hit("x"), title: "" }).detail, "(untitled)");
  });

  it("shows when its own message was written: two hits of one session differ", () => {
    const first = searchItem({ ...hit("ses_9"), time: "2026-11-30T08:00:00.000Z" });
    const second = searchItem({ ...hit("ses_9"), time: "2026-11-30T09:30:00.000Z" });
    assert.equal(first.description, `a tool printed · ${new Date("2026-11-30T08:00:00.000Z").toLocaleString()}`);
    assert.notEqual(first.description, second.description);
    // an older server sends only the session's time
    assert.equal(searchItem(hit("ses_9")).description, `a tool printed · ${new Date("2026-11-30T10:45:02.456Z").toLocaleString()}`);
  });
});
