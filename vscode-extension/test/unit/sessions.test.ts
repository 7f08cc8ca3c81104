/** The host's session store with a fake connection: resync on gaps and repeats, prompts, requests. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SessionStore, type Connection } from "../../src/sessions";
import type { SessionUpdate, SessionUpdateParams } from "../../src/shared/protocol";
import type { HostMessage } from "../../src/shared/reducer";

const S = "ses_1";
const chunk = (text: string): SessionUpdate => ({ sessionUpdate: "agent_message_chunk", messageId: "m1", text });

/** A server stand-in: keeps the session's event log, answers load by replaying it first, like the real one. */
class FakeServer implements Connection {
  readonly requests: { method: string; params: any }[] = [];
  readonly notifications: { method: string; params: any }[] = [];
  readonly log: SessionUpdateParams[] = [];
  store!: SessionStore;

  add(...updates: SessionUpdate[]): SessionUpdateParams[] {
    return updates.map((update) => {
      const params = { sessionId: S, seq: this.log.length + 1, update };
      this.log.push(params);
      return params;
    });
  }

  async request<R>(method: string, params: any): Promise<R> {
    this.requests.push({ method, params });
    await Promise.resolve();
    if (method === "agent/session/load") {
      const from = params.replay === "full" ? 1 : params.replay === "none" ? this.log.length + 1 : params.replay.fromSeq;
      for (const u of this.log.filter((u) => u.seq >= from)) this.store.handleUpdate(u);
      return { state: "idle", lastSeq: this.log.length, configOptions: [] } as R;
    }
    if (method === "agent/session/list") return { sessions: [] } as R;
    if (method === "agent/session/new") return { sessionId: S, configOptions: [] } as R;
    if (method === "agent/session/prompt") return { userMessageId: "u1", queued: false } as R;
    if (method === "agent/session/compact") return {} as R;
    throw new Error(`unexpected ${method}`);
  }

  notify(method: string, params: unknown): void {
    this.notifications.push({ method, params });
  }

  loads() {
    return this.requests.filter((r) => r.method === "agent/session/load").map((r) => r.params.replay);
  }
}

async function setup() {
  const server = new FakeServer();
  const store = new SessionStore(() => "file:///w");
  server.store = store;
  const messages: HostMessage[] = [];
  store.onMessage((m) => messages.push(m));
  await store.attach(server);
  return { server, store, messages };
}

const settle = () => new Promise((r) => setTimeout(r, 0));
const text = (store: SessionStore) => store.view(S)?.items.map((i) => ("text" in i ? i.text : "")).join("");

describe("SessionStore", () => {
  it("applies updates in order and forwards those of the shown session", async () => {
    const { server, store, messages } = await setup();
    await store.newSession();
    for (const u of server.add(chunk("a"), chunk("b"))) store.handleUpdate(u);
    assert.equal(text(store), "ab");
    assert.equal(messages.filter((m) => m.type === "update").length, 2);
    assert.deepEqual(server.loads(), []);
  });

  it("a gap reloads from the first missing seq, then the session is whole", async () => {
    const { server, store } = await setup();
    await store.newSession();
    const [a, , c] = server.add(chunk("a"), chunk("b"), chunk("c"));
    store.handleUpdate(a);
    store.handleUpdate(c); // b was lost
    await settle();
    assert.deepEqual(server.loads(), [{ fromSeq: 2 }]);
    assert.equal(text(store), "abc");
    assert.equal(store.view(S)?.lastSeq, 3);
  });

  it("a repeat reloads from after the last applied seq, and nothing is applied twice", async () => {
    const { server, store } = await setup();
    await store.newSession();
    const [a, b] = server.add(chunk("a"), chunk("b"));
    store.handleUpdate(a);
    store.handleUpdate(b);
    store.handleUpdate(b);
    await settle();
    assert.deepEqual(server.loads(), [{ fromSeq: 3 }]);
    assert.equal(text(store), "ab");
  });

  it("while a resync runs, more out-of-step updates do not start another", async () => {
    const { server, store } = await setup();
    await store.newSession();
    const [a, , c, d] = server.add(chunk("a"), chunk("b"), chunk("c"), chunk("d"));
    store.handleUpdate(a);
    store.handleUpdate(c);
    store.handleUpdate(d);
    await settle();
    assert.deepEqual(server.loads(), [{ fromSeq: 2 }]);
    assert.equal(text(store), "abcd");
  });

  it("an update of an unknown session loads it whole", async () => {
    const { server, store } = await setup();
    server.add(chunk("a"), chunk("b"));
    const [c] = server.add(chunk("c"));
    store.handleUpdate(c);
    await settle();
    assert.deepEqual(server.loads(), ["full"]);
    assert.equal(text(store), "abc");
  });

  it("opening a session replays it in full and shows it", async () => {
    const { server, store, messages } = await setup();
    server.add(chunk("x"), { sessionUpdate: "state_update", state: "idle", stopReason: "end_turn" });
    await store.open(S);
    assert.deepEqual(server.loads(), ["full"]);
    assert.equal(store.activeId, S);
    const last = messages.filter((m) => m.type === "state").at(-1);
    assert.equal(last?.type === "state" && last.state.session?.items.length, 1);
  });

  it("a restarted server: the shown session continues from where it was", async () => {
    const { server, store } = await setup();
    await store.newSession();
    for (const u of server.add(chunk("a"))) store.handleUpdate(u);
    server.add(chunk("b"));
    store.detach({ status: "stopped" });
    await store.attach(server);
    assert.deepEqual(server.loads(), [{ fromSeq: 2 }]);
    assert.equal(text(store), "ab");
  });

  it("a prompt without a session creates one first and sends the editor context", async () => {
    const { server, store } = await setup();
    await store.prompt("hello", { activeDocument: { uri: "file:///w/a.py" } });
    const methods = server.requests.map((r) => r.method);
    assert.ok(methods.indexOf("agent/session/new") < methods.indexOf("agent/session/prompt"));
    const prompt = server.requests.find((r) => r.method === "agent/session/prompt")!.params;
    assert.equal(prompt.sessionId, S);
    assert.deepEqual(prompt.prompt, [{ type: "text", text: "hello" }]);
    assert.deepEqual(prompt.context, { activeDocument: { uri: "file:///w/a.py" } });
    assert.ok(prompt.clientMessageId);
  });

  it("stop cancels the shown session", async () => {
    const { server, store } = await setup();
    await store.newSession();
    store.cancel();
    assert.deepEqual(server.notifications, [{ method: "agent/session/cancel", params: { sessionId: S } }]);
  });

  it("a permission request waits for the panel's answer and shows its session", async () => {
    const { store, messages } = await setup();
    const params = { sessionId: "ses_2", toolCallId: "t1", title: "Edit a.py", permission: "edit", patterns: [], options: [] };
    const answer = store.requestPermission(params);
    assert.equal(store.activeId, "ses_2");
    const asked = messages.find((m) => m.type === "permission");
    assert.ok(asked?.type === "permission");
    store.answerPermission(asked.request.key, { outcome: { outcome: "selected", optionId: "allow_once" } });
    assert.deepEqual(await answer, { outcome: { outcome: "selected", optionId: "allow_once" } });
    assert.ok(messages.some((m) => m.type === "requestDone" && m.key === asked.request.key));
    assert.deepEqual(store.snapshot().permissions, []);
  });

  it("the server cancelling a request ($/cancelRequest) answers cancelled and removes the card", async () => {
    const { store } = await setup();
    let cancel: () => void = () => undefined;
    const answer = store.askQuestion({ sessionId: S, toolCallId: "t1", questions: [] }, (c) => (cancel = c));
    assert.equal(store.snapshot().questions.length, 1);
    cancel();
    assert.deepEqual(await answer, { outcome: "cancelled" });
    assert.equal(store.snapshot().questions.length, 0);
  });

  it("a server that stops cancels what is pending", async () => {
    const { store } = await setup();
    const answer = store.requestPermission({ sessionId: S, toolCallId: "t1", title: "x", permission: "bash", patterns: [], options: [] });
    store.detach({ status: "stopped" });
    assert.deepEqual(await answer, { outcome: { outcome: "cancelled" } });
    assert.equal(store.snapshot().server.status, "stopped");
  });

  it("a prompt sends its text, then its mentions' blocks, with the focus context", async () => {
    const { server, store } = await setup();
    await store.newSession();
    const context = { activeDocument: { uri: "file:///w/a.py" }, cursor: { line: 3, character: 0 }, selectedText: "x" };
    await store.prompt("explain @a.py #diff", context, [{ type: "resource_link", uri: "file:///w/a.py" }, { type: "mention", name: "diff" }]);
    const sent = server.requests.find((r) => r.method === "agent/session/prompt")!.params;
    assert.deepEqual(sent.prompt, [{ type: "text", text: "explain @a.py #diff" }, { type: "resource_link", uri: "file:///w/a.py" }, { type: "mention", name: "diff" }]);
    assert.deepEqual(sent.context, context);
  });

  it("Compact now asks the server to compact the active session", async () => {
    const { server, store } = await setup();
    await assert.rejects(store.compact(), /no session/);
    await store.newSession();
    await store.compact();
    assert.deepEqual(server.requests.at(-1), { method: "agent/session/compact", params: { sessionId: S } });
  });

  it("the focus chip is told once per change and is in the panel's state", async () => {
    const { store, messages } = await setup();
    const chip = { label: "a.py:2-3", title: "src/a.py:2-3" };
    store.setFocus(chip);
    store.setFocus({ ...chip });
    store.setFocus(undefined);
    assert.deepEqual(messages.filter((m) => m.type === "focus"), [{ type: "focus", focus: chip }, { type: "focus", focus: undefined }]);
    store.setFocus(chip);
    assert.deepEqual(store.snapshot().focus, chip);
  });
});

describe("SessionStore: the pickers before the first session", () => {
  const modes = { configId: "mode", name: "Mode", category: "mode", type: "select", currentValue: "build", options: [{ value: "build", name: "Build" }, { value: "plan", name: "Plan" }] } as const;
  const models = { configId: "model", name: "Model", category: "model", type: "select", currentValue: "anthropic/a", options: [{ value: "anthropic/a", name: "A" }, { value: "openai/b", name: "B" }] } as const;
  class OptionsServer implements Connection {
    readonly requests: { method: string; params: any }[] = [];
    constructor(private readonly hasOptions = true) {}
    async request<R>(method: string, params: any): Promise<R> {
      this.requests.push({ method, params });
      if (method === "agent/session/list") return { sessions: [] } as R;
      if (method === "agent/config/options" && this.hasOptions) return { configOptions: [modes, models] } as R;
      if (method === "agent/session/new") return { sessionId: S, configOptions: [{ ...modes, currentValue: params.mode ?? "build" }] } as R;
      throw new Error(`unexpected ${method}`);
    }
    notify(): void {}
  }

  it("shows the server's modes and models, and a new session starts with what the user picked", async () => {
    const server = new OptionsServer();
    const store = new SessionStore(() => "file:///w");
    await store.attach(server);
    assert.deepEqual(store.snapshot().configOptions, [modes, models]);
    assert.equal(store.snapshot().session, undefined);
    await store.setConfigOption("mode", "plan");
    assert.equal(store.snapshot().configOptions?.find((o) => o.configId === "mode")?.currentValue, "plan");
    await assert.rejects(store.setConfigOption("mode", "yolo"), /no mode yolo/);
    await store.newSession();
    const created = server.requests.filter((r) => r.method === "agent/session/new").map((r) => r.params);
    assert.deepEqual(created, [{ workspaceFolder: "file:///w", mode: "plan" }]);
    assert.equal(store.active()?.configOptions[0].currentValue, "plan");
    // the pick was for that session: the next starts with the server's defaults
    await store.newSession();
    assert.deepEqual(server.requests.filter((r) => r.method === "agent/session/new").map((r) => r.params)[1], { workspaceFolder: "file:///w" });
  });

  it("a server without agent/config/options leaves the pickers empty", async () => {
    const store = new SessionStore(() => "file:///w");
    await store.attach(new OptionsServer(false));
    assert.deepEqual(store.snapshot().configOptions, []);
  });
});
