/** Finding the server: the setting, else `lsp-agent` on PATH, else `python -m lsp_agent serve`. */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, it } from "node:test";
import { resolveServerCommand, startFailureMessage, which } from "../../src/serverCommand";

const none = () => undefined;

describe("resolveServerCommand", () => {
  it("the setting as a full command line wins", () => {
    const c = resolveServerCommand({ setting: ["/v/bin/python", "-m", "lsp_agent", "serve"], which: () => "/usr/bin/lsp-agent" });
    assert.deepEqual(c, { command: "/v/bin/python", args: ["-m", "lsp_agent", "serve"], source: "setting" });
  });

  it("the setting as a string is the lsp-agent executable", () => {
    assert.deepEqual(resolveServerCommand({ setting: " /opt/lsp-agent ", which: none }), { command: "/opt/lsp-agent", args: ["serve"], source: "setting" });
  });

  it("then lsp-agent on PATH", () => {
    const c = resolveServerCommand({ setting: [], which: (n) => (n === "lsp-agent" ? "/usr/local/bin/lsp-agent" : undefined) });
    assert.deepEqual(c, { command: "/usr/local/bin/lsp-agent", args: ["serve"], source: "path" });
  });

  it("then the selected Python", () => {
    const c = resolveServerCommand({ setting: "", python: "/w/.venv/bin/python", which: (n) => (n === "python3" ? "/usr/bin/python3" : undefined) });
    assert.deepEqual(c, { command: "/w/.venv/bin/python", args: ["-m", "lsp_agent", "serve"], source: "python" });
  });

  it("else python3 from PATH", () => {
    const c = resolveServerCommand({ setting: undefined, which: (n) => (n === "python3" ? "/usr/bin/python3" : undefined) });
    assert.equal(c.command, "/usr/bin/python3");
  });

  it("ignores a malformed setting", () => {
    assert.equal(resolveServerCommand({ setting: [1, 2], which: none }).source, "python");
  });
});

describe("which", () => {
  it("finds executables on the given PATH only", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "which-"));
    fs.writeFileSync(path.join(dir, "tool"), "#!/bin/sh\n", { mode: 0o755 });
    fs.writeFileSync(path.join(dir, "plain"), "", { mode: 0o644 });
    assert.equal(which("tool", dir), path.join(dir, "tool"));
    assert.equal(which("plain", dir), undefined);
    assert.equal(which("tool", "/nonexistent"), undefined);
    fs.rmSync(dir, { recursive: true });
  });
});

describe("startFailureMessage", () => {
  it("says how to install the server when the Python fallback failed", () => {
    const m = startFailureMessage({ command: "/usr/bin/python3", args: ["-m", "lsp_agent", "serve"], source: "python" }, new Error("No module named lsp_agent"));
    assert.match(m, /No module named lsp_agent/);
    assert.match(m, /run scripts\/install in a clone of the lsp-agent repository/);
    assert.match(m, /~\/\.local\/bin/);
    assert.doesNotMatch(m, /pip install lsp-agent/); // no registry has it
    assert.match(m, /lspAgent\.serverCommand to the lsp-agent executable's full path/);
  });

  it("points at the setting when the setting's command failed", () => {
    const m = startFailureMessage({ command: "/nope", args: [], source: "setting" }, new Error("spawn /nope ENOENT"));
    assert.match(m, /setting lspAgent\.serverCommand \(\/nope\)/);
  });
});
