/** The focus sent with a prompt and the chip that shows it ("a.py:12-18"). */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { focusChip, focusContext, selectedLines, type EditorFocus } from "../../src/shared/focus";

const at = (line: number, character: number) => ({ line, character });
const base: EditorFocus = { uri: "file:///w/src/a.py", path: "src/a.py", cursor: at(4, 2) };
const selected: EditorFocus = { ...base, cursor: at(18, 0), selection: { start: at(11, 0), end: at(18, 0) }, selectedText: "x = 1\n" };

describe("focus", () => {
  it("the chip names the file and the selected lines, 1-based; a selection ending at column 0 stops on the line before", () => {
    assert.equal(focusChip(base).label, "a.py");
    assert.equal(focusChip(selected).label, "a.py:12-18");
    assert.equal(focusChip({ ...base, selection: { start: at(3, 1), end: at(3, 6) } }).label, "a.py:4");
    assert.match(focusChip(selected).title, /^src\/a\.py:12-18/);
    assert.deepEqual(selectedLines({ start: at(2, 0), end: at(3, 0) }), [3, 3]);
    assert.deepEqual(selectedLines({ start: at(2, 0), end: at(3, 1) }), [3, 4]);
  });

  it("sends the file and the cursor always, the selection and its text when there is one", () => {
    assert.deepEqual(focusContext(base, { send: true }), { activeDocument: { uri: base.uri }, cursor: at(4, 2) });
    assert.deepEqual(focusContext(selected, { send: true }), {
      activeDocument: { uri: base.uri },
      cursor: at(18, 0),
      selection: { start: at(11, 0), end: at(18, 0) },
      selectedText: "x = 1\n",
    });
    assert.equal(focusContext({ ...base, selection: { start: at(4, 2), end: at(4, 2) } }, { send: true })?.selection, undefined, "an empty selection is none");
  });

  it("off (the setting, or the chip removed): nothing, unless #selection asks for the selection", () => {
    assert.equal(focusContext(selected, { send: false }), undefined);
    assert.equal(focusContext(undefined, { send: true }), undefined);
    assert.deepEqual(focusContext(selected, { send: false, selection: true }), {
      activeDocument: { uri: base.uri },
      selection: { start: at(11, 0), end: at(18, 0) },
      selectedText: "x = 1\n",
    });
  });

  it("caps the selected text at 100000 characters", () => {
    const big = { ...selected, selectedText: "y".repeat(150_000) };
    assert.equal(focusContext(big, { send: true })?.selectedText?.length, 100_000);
  });
});
