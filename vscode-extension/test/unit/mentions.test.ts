/** Mentions in the panel's input: the word at the caret, fuzzy ranking, completions and the blocks sent. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { applyCompletion, fuzzyScore, hashItems, mentionAt, mentionBlocks, rankPaths, wantsSelection, type PickedMention } from "../../src/shared/mentions";

describe("mentionAt and applyCompletion", () => {
  it("finds the @ or # word that ends at the caret, at the start or after a space only", () => {
    assert.deepEqual(mentionAt("see @src/a", 10), { trigger: "@", query: "src/a", start: 4, end: 10 });
    assert.deepEqual(mentionAt("#di", 3), { trigger: "#", query: "di", start: 0, end: 3 });
    assert.deepEqual(mentionAt("x @", 3), { trigger: "@", query: "", start: 2, end: 3 });
    assert.equal(mentionAt("mail me@host", 12), undefined, "an @ inside a word is no mention");
    assert.equal(mentionAt("see @a.py now", 13), undefined, "the caret is past the word");
  });

  it("replaces the word with the completion and a space, keeping the rest", () => {
    assert.deepEqual(applyCompletion("see @a then", { trigger: "@", query: "a", start: 4, end: 6 }, "@src/a.py"), { text: "see @src/a.py then", caret: 14 });
    assert.deepEqual(applyCompletion("#d", { trigger: "#", query: "d", start: 0, end: 2 }, "#diff"), { text: "#diff ", caret: 6 });
  });
});

describe("fuzzy ranking", () => {
  it("matches subsequences only, case-insensitively", () => {
    assert.notEqual(fuzzyScore("apy", "src/a.py"), undefined);
    assert.notEqual(fuzzyScore("SRA", "src/a.py"), undefined);
    assert.equal(fuzzyScore("zz", "src/a.py"), undefined);
  });

  it("prefers the file name, a prefix of it, and shorter paths", () => {
    const paths = ["docs/api/alpha.md", "src/a.py", "lib/data.py", "tests/test_a.py"];
    assert.equal(rankPaths("a.py", paths)[0], "src/a.py");
    assert.deepEqual(rankPaths("alp", paths), ["docs/api/alpha.md"]);
    assert.equal(rankPaths("", paths, 2).length, 2);
    assert.equal(rankPaths("test", paths)[0], "tests/test_a.py");
  });
});

describe("# completions and the blocks of a prompt", () => {
  it("offers the names the server expands", () => {
    assert.deepEqual(hashItems("d").map((i) => i.label), ["#diagnostics", "#diff"]);
    assert.deepEqual(hashItems("", ["diff", "buffers"]).map((i) => i.insert), ["#buffers", "#diff"]);
    assert.deepEqual(hashItems("sel")[0].block, { type: "mention", name: "selection" });
  });

  it("picked completions, #names and @paths typed by hand become blocks, once each, in order", () => {
    const symbol: PickedMention = { text: "@Greeter", block: { type: "resource_link", uri: "file:///w/g.ts", range: { start: { line: 2, character: 0 }, end: { line: 9, character: 1 } } } };
    const files: Record<string, string> = { "a.py": "file:///w/a.py", "src/b.py": "file:///w/src/b.py" };
    const blocks = mentionBlocks("fix @a.py, @Greeter and #diff; see #nothing @missing.py #diff @src/b.py.", [symbol], (p) => files[p]);
    assert.deepEqual(blocks, [{ type: "resource_link", uri: "file:///w/a.py" }, symbol.block, { type: "mention", name: "diff" }, { type: "resource_link", uri: "file:///w/src/b.py" }]);
    assert.deepEqual(mentionBlocks("#diff and #buffers", [], () => undefined, ["buffers"]), [{ type: "mention", name: "buffers" }], "only what the server expands");
    assert.deepEqual(mentionBlocks("email me@a.py", [], (p) => files[p]), []);
  });

  it("#selection asks for the selection", () => {
    assert.equal(wantsSelection(mentionBlocks("explain #selection", [], () => undefined)), true);
    assert.equal(wantsSelection(mentionBlocks("explain #diff", [], () => undefined)), false);
  });
});
