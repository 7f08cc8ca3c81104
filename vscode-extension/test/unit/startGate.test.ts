/** Waiting for the server: commands issued while it starts run once it is up; a failed start gives its reason. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { StartGate } from "../../src/startGate";
import { SessionStore, type Connection } from "../../src/sessions";
import type { HostMessage } from "../../src/shared/reducer";

const settle = () => new Promise((r) => setTimeout(r, 0));

/** Records what a promise did so far (without awaiting it). */
function watch<T>(p: Promise<T>) {
  const seen: { value?: T; error?: Error; done: boolean } = { done: false };
  p.then(
    (value) => Object.assign(seen, { value, done: true }),
    (error: Error) => Object.assign(seen, { error, done: true }),
  );
  return seen;
}

describe("StartGate", () => {
  it("queues while starting and hands every waiter the connection once ready", async () => {
    const gate = new StartGate<string>();
    gate.starting();
    const a = watch(gate.wait());
    const b = watch(gate.wait());
    await settle();
    assert.equal(a.done, false);
    assert.equal(b.done, false);
    gate.ready("conn");
    await settle();
    assert.deepEqual([a.value, b.value], ["conn", "conn"]);
    assert.equal(await gate.wait(), "conn");
  });

  it("rejects the waiters and later calls with the reason of a failed start", async () => {
    const gate = new StartGate<string>();
    gate.starting();
    const waiting = watch(gate.wait());
    gate.failed("lsp-agent failed to start: no API key");
    await settle();
    assert.equal(waiting.error?.message, "lsp-agent failed to start: no API key");
    await assert.rejects(gate.wait(), /no API key/);
    // a new start clears the failure
    gate.starting();
    const again = watch(gate.wait());
    gate.ready("conn2");
    await settle();
    assert.equal(again.value, "conn2");
  });

  it("starts a stopped server when someone waits, once per wait", async () => {
    let kicks = 0;
    const gate = new StartGate<string>(() => kicks++);
    const waiting = watch(gate.wait());
    assert.equal(kicks, 1);
    gate.starting();
    watch(gate.wait());
    assert.equal(kicks, 1, "no second start while one is under way");
    gate.ready("conn");
    await settle();
    assert.equal(waiting.value, "conn");
  });

  it("a server that goes away rejects the waiters with why", async () => {
    const gate = new StartGate<string>();
    gate.starting();
    const waiting = watch(gate.wait());
    gate.stopped("the server stopped");
    await settle();
    assert.equal(waiting.error?.message, "the server stopped");
  });
});

class FakeServer implements Connection {
  readonly requests: string[] = [];
  async request<R>(method: string): Promise<R> {
    this.requests.push(method);
    if (method === "agent/session/list") return { sessions: [] } as R;
    if (method === "agent/session/new") return { sessionId: "ses_1", configOptions: [] } as R;
    if (method === "agent/session/prompt") return { userMessageId: "u1", queued: false } as R;
    throw new Error(`unexpected ${method}`);
  }
  notify(): void {}
}

describe("SessionStore while the server starts", () => {
  it("a prompt sent before the server is up waits for it, then reaches it", async () => {
    const store = new SessionStore(() => "file:///w");
    const server = new FakeServer();
    store.setServer({ status: "starting" });
    const sent = watch(store.prompt("hello"));
    await settle();
    assert.equal(sent.done, false);
    assert.deepEqual(server.requests, []);
    await store.attach(server);
    await settle();
    await settle();
    assert.equal(sent.error, undefined);
    assert.deepEqual(sent.value, { userMessageId: "u1", queued: false });
    assert.deepEqual(
      server.requests.filter((m) => m === "agent/session/new" || m === "agent/session/prompt"),
      ["agent/session/new", "agent/session/prompt"],
    );
  });

  it("a server attached while it still builds its agent shows starting but takes requests", async () => {
    const store = new SessionStore();
    const messages: HostMessage[] = [];
    store.onMessage((m) => messages.push(m));
    const server = new FakeServer();
    await store.attach(server, { status: "starting", message: "Starting…" });
    assert.equal(store.serverStatus.status, "starting");
    assert.equal(await store.connected(), server);
    store.setServer({ status: "running" });
    assert.deepEqual(
      messages.filter((m) => m.type === "server").map((m) => (m.type === "server" ? m.server.status : "")),
      ["starting", "running"],
    );
  });

  it("a failed start fails the waiting prompt and the next ones with the reason", async () => {
    const store = new SessionStore();
    store.setServer({ status: "starting" });
    const sent = watch(store.prompt("hello"));
    store.detach({ status: "failed", message: "lsp-agent failed to start: bad config" });
    await settle();
    assert.equal(sent.error?.message, "lsp-agent failed to start: bad config");
    await assert.rejects(store.newSession(), /bad config/);
  });

  it("a request on a stopped server starts it and runs once it is up; a restart keeps requests waiting", async () => {
    const store = new SessionStore();
    const server = new FakeServer();
    let starts = 0;
    store.startServer = () => {
      starts++;
      store.setServer({ status: "starting" });
    };
    store.detach({ status: "stopped" });
    const listed = watch(store.refreshSessions());
    assert.equal(starts, 1);
    await store.attach(server);
    await settle();
    assert.deepEqual(listed.value, []);
    // a restart: detached as "starting", requests wait for the new server instead of failing
    store.detach({ status: "starting" });
    const again = watch(store.newSession());
    await settle();
    assert.equal(again.done, false);
    await store.attach(server);
    await settle();
    await settle();
    assert.equal(again.value, "ses_1");
    assert.equal(starts, 1);
  });
});
