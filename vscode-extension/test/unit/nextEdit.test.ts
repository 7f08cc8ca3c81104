/**
 * Next-edit suggestions (issue 36): asked once the edits pause, an answer for an older document
 * version dropped unseen, Tab jumps then accepts, and every shown suggestion reported once.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { acceptedId, contains, MAX_SHOWN, NextEditController, shownText, type CancelToken, type NextEditHost } from "../../src/nextEdit";
import type { NextEditParams, NextEditResult, Position } from "../../src/shared/protocol";

const URI = "file:///ws/a.py";
const settle = () => new Promise((r) => setTimeout(r, 0));

function suggestion(over: Partial<NextEditResult> = {}): NextEditResult {
  return {
    id: "ne-1",
    uri: URI,
    range: { start: { line: 9, character: 4 }, end: { line: 9, character: 9 } },
    newText: "total",
    reason: "the other use of the renamed name",
    ...over,
  };
}

/** A fake editor: one document, a cursor, manual timers and scripted answers. */
class FakeHost implements NextEditHost {
  versions = new Map<string, number>([[URI, 1]]);
  active: { uri: string; position: Position } | undefined = { uri: URI, position: { line: 0, character: 3 } };
  asked: { params: NextEditParams; token: CancelToken; answer(r: NextEditResult | null): void; fail(e: Error): void }[] = [];
  feedbacks: [string, boolean][] = [];
  shown: NextEditResult[] = [];
  hidden = 0;
  revealed: NextEditResult[] = [];
  applied: NextEditResult[] = [];
  applyResult = true;
  timers: { f: () => void; ms: number; cleared: boolean }[] = [];

  cursor() {
    if (!this.active) return undefined;
    return { uri: this.active.uri, version: this.versions.get(this.active.uri)!, position: this.active.position };
  }
  version(uri: string) {
    return this.versions.get(uri);
  }
  request(params: NextEditParams, token: CancelToken) {
    return new Promise<NextEditResult | null>((answer, fail) => this.asked.push({ params, token, answer, fail }));
  }
  feedback(id: string, accepted: boolean) {
    this.feedbacks.push([id, accepted]);
  }
  show(s: NextEditResult) {
    this.shown.push(s);
  }
  hide() {
    this.hidden++;
  }
  reveal(s: NextEditResult) {
    this.revealed.push(s);
    this.active = { uri: s.uri, position: s.range.start };
  }
  async apply(s: NextEditResult, version: number) {
    if (!this.applyResult || this.versions.get(s.uri) !== version) return false;
    this.applied.push(s);
    this.type(s.uri); // the edit changes the document (and VS Code says so while applying)
    return true;
  }
  setTimer(f: () => void, ms: number) {
    const t = { f, ms, cleared: false };
    this.timers.push(t);
    return t;
  }
  clearTimer(handle: unknown) {
    (handle as { cleared: boolean }).cleared = true;
  }

  // -- the test's hands
  controller?: NextEditController;
  /** A keystroke: the version goes up and the controller hears of it. */
  type(uri = URI) {
    this.versions.set(uri, (this.versions.get(uri) ?? 0) + 1);
    this.controller?.edited(uri);
  }
  /** The pending debounce timers run (the edits paused). */
  pause() {
    const live = this.timers.filter((t) => !t.cleared);
    this.timers = [];
    for (const t of live) t.f();
  }
  liveTimers() {
    return this.timers.filter((t) => !t.cleared);
  }
}

function setup(enabled = true) {
  const host = new FakeHost();
  const controller = new NextEditController(host, () => enabled, 600);
  host.controller = controller;
  return { host, controller };
}

/** Types, pauses, and answers the one question with `s`. */
async function showOne(host: FakeHost, s = suggestion()) {
  host.type();
  host.pause();
  assert.equal(host.asked.length, 1);
  host.asked[0].answer(s);
  await settle();
}

describe("NextEditController: when it asks", () => {
  it("asks once after a burst of keystrokes pauses, with the document version and cursor at that moment", () => {
    const { host } = setup();
    for (let i = 0; i < 10; i++) host.type();
    assert.equal(host.liveTimers().length, 1, "one debounce timer for ten keystrokes");
    assert.equal(host.liveTimers()[0].ms, 600);
    assert.equal(host.asked.length, 0, "nothing asked while typing");
    host.pause();
    assert.equal(host.asked.length, 1);
    assert.deepEqual(host.asked[0].params, { textDocument: { uri: URI, version: 11 }, position: { line: 0, character: 3 } });
  });

  it("asks nothing of a server without completions, or for a file that is not the active one", () => {
    const off = setup(false);
    off.host.type();
    off.host.pause();
    assert.equal(off.host.asked.length, 0);
    const other = setup();
    other.host.versions.set("file:///ws/b.py", 1);
    other.host.type("file:///ws/b.py");
    other.host.pause();
    assert.equal(other.host.asked.length, 0);
  });

  it("a keystroke cancels the question in flight; its answer is never shown", async () => {
    const { host } = setup();
    host.type();
    host.pause();
    const first = host.asked[0];
    host.type();
    assert.equal(first.token.cancelled, true);
    first.answer(suggestion());
    await settle();
    assert.deepEqual(host.shown, []);
    assert.deepEqual(host.feedbacks, []);
  });

  it("an agent's edit asks at once, without waiting for a pause", () => {
    const { host, controller } = setup();
    controller.agentEdited();
    assert.equal(host.asked.length, 1);
    assert.equal(host.liveTimers().length, 0);
  });
});

describe("NextEditController: stale answers", () => {
  it("drops silently an answer for a version the document has left (not shown, not reported)", async () => {
    const { host, controller } = setup();
    controller.agentEdited();
    // the document changes without the controller hearing (e.g. the answer overtakes the change event)
    host.versions.set(URI, 7);
    host.asked[0].answer(suggestion());
    await settle();
    assert.deepEqual(host.shown, []);
    assert.deepEqual(host.feedbacks, []);
    assert.equal(controller.visible, undefined);
  });

  it("drops an answer for another file, and a null or failed answer shows nothing", async () => {
    const { host, controller } = setup();
    controller.agentEdited();
    host.asked[0].answer(suggestion({ uri: "file:///ws/other.py" }));
    controller.agentEdited();
    host.asked[1].answer(null);
    controller.agentEdited();
    host.asked[2].fail(new Error("method not found"));
    await settle();
    assert.deepEqual(host.shown, []);
  });

  it("shows a current answer", async () => {
    const { host, controller } = setup();
    await showOne(host);
    assert.deepEqual(host.shown, [suggestion()]);
    assert.deepEqual(controller.visible, suggestion());
  });
});

describe("NextEditController: Tab, Escape and typing", () => {
  it("Tab jumps to the suggestion, a second Tab applies it and reports it accepted", async () => {
    const { host, controller } = setup();
    await showOne(host);
    assert.equal(await controller.tab(), "jumped");
    assert.deepEqual(host.revealed, [suggestion()]);
    assert.deepEqual(host.applied, []);
    assert.deepEqual(host.feedbacks, []);
    assert.equal(await controller.tab(), "accepted");
    assert.deepEqual(host.applied, [suggestion()]);
    assert.deepEqual(host.feedbacks, [["ne-1", true]], "accepted once, and the edit it made is no rejection");
    assert.equal(controller.visible, undefined);
    assert.equal(host.hidden, 1);
    // the accepted edit is an edit: the next suggestion is asked for once it settles
    host.pause();
    assert.equal(host.asked.length, 2);
  });

  it("Tab with the cursor already on the suggestion accepts at once", async () => {
    const { host, controller } = setup();
    await showOne(host);
    host.active = { uri: URI, position: { line: 9, character: 9 } };
    assert.equal(await controller.tab(), "accepted");
    assert.deepEqual(host.revealed, []);
  });

  it("Tab with nothing shown does nothing (the key is the editor's)", async () => {
    const { host, controller } = setup();
    assert.equal(await controller.tab(), "none");
    assert.deepEqual(host.feedbacks, []);
  });

  it("a suggestion the document left behind is dropped by Tab, not applied", async () => {
    const { host, controller } = setup();
    await showOne(host);
    host.versions.set(URI, 99); // changed without an event the controller saw
    assert.equal(await controller.tab(), "dropped");
    assert.deepEqual(host.applied, []);
    assert.deepEqual(host.feedbacks, []);
    assert.equal(controller.visible, undefined);
  });

  it("Escape rejects: reported not accepted, hidden", async () => {
    const { host, controller } = setup();
    await showOne(host);
    controller.escape();
    assert.deepEqual(host.feedbacks, [["ne-1", false]]);
    assert.equal(controller.visible, undefined);
    controller.escape();
    assert.equal(host.feedbacks.length, 1, "reported once");
  });

  it("typing rejects the shown suggestion and asks again after the pause", async () => {
    const { host, controller } = setup();
    await showOne(host);
    host.type();
    assert.deepEqual(host.feedbacks, [["ne-1", false]]);
    assert.equal(controller.visible, undefined);
    host.pause();
    assert.equal(host.asked.length, 2);
  });

  it("leaving the file rejects the suggestion; staying does not", async () => {
    const { host, controller } = setup();
    await showOne(host);
    controller.activeChanged(URI);
    assert.deepEqual(host.feedbacks, []);
    controller.activeChanged("file:///ws/b.py");
    assert.deepEqual(host.feedbacks, [["ne-1", false]]);
  });

  it("an agent edit does not replace a shown suggestion; a newer answer replaces it and rejects the old one", async () => {
    const { host, controller } = setup();
    await showOne(host);
    controller.agentEdited();
    assert.equal(host.asked.length, 1);
    const asking = controller.ask();
    host.asked[1].answer(suggestion({ id: "ne-2" }));
    await asking;
    assert.deepEqual(host.feedbacks, [["ne-1", false]]);
    assert.equal(controller.visible?.id, "ne-2");
  });

  it("dispose cancels the question in flight and hides the suggestion without reporting", async () => {
    const { host, controller } = setup();
    await showOne(host);
    void controller.ask();
    const inFlight = host.asked[1];
    controller.dispose();
    assert.equal(inFlight.token.cancelled, true);
    assert.equal(controller.visible, undefined);
    assert.equal(host.hidden, 1);
    assert.deepEqual(host.feedbacks, []);
  });
});

describe("helpers", () => {
  it("contains: both ends count", () => {
    const range = { start: { line: 2, character: 4 }, end: { line: 3, character: 1 } };
    assert.equal(contains(range, { line: 2, character: 4 }), true);
    assert.equal(contains(range, { line: 3, character: 1 }), true);
    assert.equal(contains(range, { line: 2, character: 99 }), true);
    assert.equal(contains(range, { line: 2, character: 3 }), false);
    assert.equal(contains(range, { line: 3, character: 2 }), false);
  });

  it("acceptedId takes the item's id from the command's arguments", () => {
    assert.equal(acceptedId(["ic-7"]), "ic-7");
    assert.equal(acceptedId([{ id: "ic-8" }]), "ic-8");
    assert.equal(acceptedId([]), undefined);
    assert.equal(acceptedId([42]), undefined);
  });

  it("shownText keeps the new text on one line and cuts a long one", () => {
    assert.equal(shownText("a\nb\r\nc"), "a⏎b⏎c");
    assert.equal(shownText(""), "⌫");
    const long = shownText("x".repeat(500));
    assert.equal(long.length, MAX_SHOWN);
    assert.ok(long.endsWith("…"));
  });
});
