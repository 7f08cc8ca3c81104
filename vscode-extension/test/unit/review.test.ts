/** The review list turned into the Changes section, CodeLenses, gutter marks, and edited proposals. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ReviewFile, ReviewHunk } from "../../src/shared/protocol";
import { countHunks, countsLine, hunkLabel, hunksAtLines, lineCount, modifiedContent, pendingMarks, reviewModel } from "../../src/shared/review";

const range = (start: number, end: number) => ({ start: { line: start, character: 0 }, end: { line: end, character: 0 } });
const hunk = (id: string, status: ReviewHunk["status"], r: ReturnType<typeof range> | null, oldText: string, newText: string): ReviewHunk => ({
  hunkId: id,
  status,
  messageId: "msg_1",
  range: r,
  oldText,
  newText,
});

// a.py: line 2 changed (pending), a new function at 10–12 (pending), line 20 undone, a deletion at 30 (pending)
const A: ReviewFile = {
  uri: "file:///w/src/a.py",
  status: "mixed",
  hunks: [
    hunk("hnk_1", "pending", range(2, 3), "x = 1\n", "x = 2\n"),
    hunk("hnk_2", "pending", range(10, 13), "", "def f():\n    return 1\n\n"),
    hunk("hnk_3", "undone", range(20, 21), "old\n", "new\n"),
    hunk("hnk_4", "pending", range(30, 30), "gone = 1\ngone = 2\n", ""),
    hunk("hnk_5", "pending", null, "a\n", "b\n"),
  ],
};
const B: ReviewFile = { uri: "file:///w/b%20c.py", status: "kept", hunks: [hunk("hnk_6", "kept", range(0, 1), "", "print('hi')")] };

describe("lineCount and hunkLabel", () => {
  it("counts whole lines, the last one with or without its newline", () => {
    assert.deepEqual(["", "a\n", "a", "a\nb", "a\nb\n", "\n\n"].map(lineCount), [0, 1, 1, 2, 2, 2]);
  });

  it("labels a hunk with its first non-blank line: of the new text, else of the deleted one", () => {
    assert.equal(hunkLabel({ oldText: "", newText: "\n  def f():\n" }), "def f():");
    assert.equal(hunkLabel({ oldText: "gone = 1\n", newText: "" }), "gone = 1");
    assert.equal(hunkLabel({ oldText: "", newText: "\n\n" }), "(blank lines)");
    const long = hunkLabel({ oldText: "", newText: `${"x".repeat(200)}\n` });
    assert.equal(long.length, 80);
    assert.ok(long.endsWith("…"));
  });
});

describe("reviewModel: the Changes section", () => {
  it("has files in order, their hunks with line, label and +/- counts, and the counts", () => {
    const model = reviewModel({ files: [A, B] });
    assert.deepEqual(model.counts, { pending: 4, kept: 1, undone: 1 });
    assert.deepEqual(model.files.map((f) => [f.name, f.dir, f.status]), [["a.py", "/w/src", "mixed"], ["b c.py", "/w", "kept"]]);
    assert.deepEqual(model.files[0].counts, { pending: 4, kept: 0, undone: 1 });
    assert.deepEqual(
      model.files[0].hunks.map((h) => [h.hunkId, h.status, h.line, h.label, h.additions, h.deletions]),
      [
        ["hnk_1", "pending", 3, "x = 2", 1, 1],
        ["hnk_2", "pending", 11, "def f():", 3, 0],
        ["hnk_3", "undone", 21, "new", 1, 1],
        ["hnk_4", "pending", 31, "gone = 1", 0, 2],
        ["hnk_5", "pending", null, "b", 1, 1],
      ],
    );
    assert.equal(model.files[1].hunks[0].additions, 1, "a last line without a newline is a line");
  });

  it("an empty list has no files and zero counts", () => {
    assert.deepEqual(reviewModel({ files: [] }), { files: [], counts: { pending: 0, kept: 0, undone: 0 } });
  });

  it("says the counts in one line", () => {
    assert.equal(countsLine(countHunks(A.hunks)), "4 pending · 0 kept · 1 undone");
  });
});

describe("pendingMarks: the CodeLenses and gutter marks of a file", () => {
  it("are the pending hunks with a place, by line, with their kind", () => {
    assert.deepEqual(pendingMarks(A), [
      { hunkId: "hnk_1", line: 2, startLine: 2, endLine: 3, kind: "modified" },
      { hunkId: "hnk_2", line: 10, startLine: 10, endLine: 13, kind: "added" },
      { hunkId: "hnk_4", line: 30, startLine: 30, endLine: 30, kind: "deleted" },
    ]);
  });

  it("none for a file without pending hunks, or not in the list", () => {
    assert.deepEqual(pendingMarks(B), []);
    assert.deepEqual(pendingMarks(undefined), []);
  });

  it("are sorted by line whatever the list's order", () => {
    const shuffled = { ...A, hunks: [...A.hunks].reverse() };
    assert.deepEqual(pendingMarks(shuffled).map((m) => m.hunkId), ["hnk_1", "hnk_2", "hnk_4"]);
  });
});

describe("hunksAtLines: the pending hunks under the cursor", () => {
  it("finds a hunk whose lines the selection overlaps", () => {
    assert.deepEqual(hunksAtLines(A, 2, 2), ["hnk_1"]);
    assert.deepEqual(hunksAtLines(A, 12, 12), ["hnk_2"]);
    assert.deepEqual(hunksAtLines(A, 13, 13), [], "the line after a hunk is not in it");
    assert.deepEqual(hunksAtLines(A, 0, 11), ["hnk_1", "hnk_2"]);
  });

  it("finds a deletion at the cursor's line or the line just after it", () => {
    assert.deepEqual(hunksAtLines(A, 30, 30), ["hnk_4"]);
    assert.deepEqual(hunksAtLines(A, 29, 29), ["hnk_4"]);
    assert.deepEqual(hunksAtLines(A, 31, 31), []);
  });

  it("never an undone or a kept hunk", () => {
    assert.deepEqual(hunksAtLines(A, 20, 20), []);
    assert.deepEqual(hunksAtLines(B, 0, 0), []);
  });
});

describe("modifiedContent: what an Allow sends", () => {
  const proposed: Record<string, string> = { "file:///w/a.py": "x = 2\n", "file:///w/b.py": "y = 2\n", "file:///w/c.py": "z = 2\n" };

  it("is the user's text of each proposal they changed, keyed by the ask's uri", () => {
    const edited: Record<string, string> = { "file:///w/a.py": "x = 3\n", "file:///w/b.py": "y = 2\n" };
    assert.deepEqual(
      modifiedContent(Object.keys(proposed), (u) => edited[u], (u) => proposed[u]),
      { "file:///w/a.py": "x = 3\n" },
    );
  });

  it("is nothing for untouched proposals (the untouched Allow sends nothing extra)", () => {
    assert.equal(modifiedContent(Object.keys(proposed), () => undefined, (u) => proposed[u]), undefined);
    assert.equal(modifiedContent(Object.keys(proposed), (u) => proposed[u], (u) => proposed[u]), undefined);
  });

  it("leaves out a file whose proposal was never loaded", () => {
    assert.equal(modifiedContent(["file:///w/new.py"], () => "text", () => undefined), undefined);
  });

  it("sends an emptied proposal (the user dropped everything)", () => {
    assert.deepEqual(modifiedContent(["file:///w/a.py"], () => "", (u) => proposed[u]), { "file:///w/a.py": "" });
  });
});
