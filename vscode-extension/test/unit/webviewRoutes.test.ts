/** The panel's message table (features/webviewRoutes.ts) and the prompt put back after an Undo (promptText.ts). */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { router, type Routes } from "../../src/features/webviewRoutes";
import { typedPrompt } from "../../src/promptText";

describe("the panel's message router", () => {
  const calls: string[] = [];
  const routes = new Proxy({} as Routes, {
    get: (_, type: string) => (msg: { type: string }) => {
      calls.push(`${type}:${JSON.stringify(msg)}`);
    },
  });

  it("runs the handler of the message's type, with the message", async () => {
    calls.length = 0;
    const route = router(routes);
    await route({ type: "selectSession", sessionId: "ses_1" });
    await route({ type: "stop" });
    assert.deepEqual(calls, ['selectSession:{"type":"selectSession","sessionId":"ses_1"}', 'stop:{"type":"stop"}']);
  });

  it("leaves ready and resync to the view", async () => {
    calls.length = 0;
    await router(routes)({ type: "ready" });
    await router(routes)({ type: "resync" });
    assert.deepEqual(calls, []);
  });

  it("passes a handler's error on (the view shows it)", async () => {
    const failing = { ...Object.fromEntries(["prompt"].map((k) => [k, () => Promise.reject(new Error("no server"))])) } as unknown as Routes;
    await assert.rejects(router(failing)({ type: "prompt", text: "hi" }), /no server/);
  });
});

describe("the prompt as typed", () => {
  it("drops the editor context block the server added and joins the rest", () => {
    assert.equal(
      typedPrompt([
        { type: "text", text: "fix it" },
        { type: "text", text: "Editor context:\nfile: a.py" },
        { type: "text", text: "and test it" },
      ]),
      "fix it\nand test it",
    );
  });

  it("is empty without a prompt", () => {
    assert.equal(typedPrompt(undefined), "");
  });
});
