/** `path:line` in the agent's answers: what is a reference, and what stays text. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { findCodeRefs } from "../../src/shared/codeRefs";

const refs = (text: string) => findCodeRefs(text).map((r) => [text.slice(r.start, r.end), r.path, r.line, r.column]);

describe("code references", () => {
  it("finds path:line and path:line:col, relative, absolute and dotted", () => {
    assert.deepEqual(refs("See src/a.py:12 and lib/b.ts:3:7."), [
      ["src/a.py:12", "src/a.py", 12, undefined],
      ["lib/b.ts:3:7", "lib/b.ts", 3, 7],
    ]);
    assert.deepEqual(refs("(/home/u/p/x.rs:40)"), [["/home/u/p/x.rs:40", "/home/u/p/x.rs", 40, undefined]]);
    assert.deepEqual(refs("./setup.cfg:2, ../up/Makefile.am:9"), [
      ["./setup.cfg:2", "./setup.cfg", 2, undefined],
      ["../up/Makefile.am:9", "../up/Makefile.am", 9, undefined],
    ]);
    assert.deepEqual(refs("stats.py:3"), [["stats.py:3", "stats.py", 3, undefined]]);
    assert.deepEqual(refs("a range app/main.go:12-20"), [["app/main.go:12-20", "app/main.go", 12, undefined]]);
    assert.deepEqual(refs("docker/Dockerfile:4"), [["docker/Dockerfile:4", "docker/Dockerfile", 4, undefined]]);
  });

  it("leaves times, ports, URLs, ratios and line 0 alone", () => {
    assert.deepEqual(refs("at 12:30, on localhost:8080, http://h.io/a.py:3, ratio 1:2, x.py:0"), []);
    assert.deepEqual(refs("version v1.2:3x"), []);
  });
});
