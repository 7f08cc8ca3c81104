/** The `@` file list's git (issue 31 §1–2): never a planted git, nothing of the project's config runs. */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, it } from "node:test";
import { findProgram, gitEnvironment, gitListFiles, trustedPath } from "../../src/safeGit";

const KEY = "sk-ant-api03-vscode-test-key-0123456789";

/** A script that leaves a marker (with its environment) named `name` in `markers`. */
function plant(file: string, markers: string, name: string, then = ""): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `#!/bin/sh\n/usr/bin/env > "${markers}/${name}.$$"\n${then}\n`, { mode: 0o755 });
}

/** A repository whose config runs a program through fsmonitor (also from an included file) and hooks, plus a planted git. */
function hostile(): { ws: string; markers: string; planted: string } {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "safe-git-")));
  const ws = path.join(base, "ws");
  const markers = path.join(base, "markers");
  fs.mkdirSync(ws);
  fs.mkdirSync(markers);
  const git = (...args: string[]) => execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: ws, stdio: "ignore" });
  fs.writeFileSync(path.join(ws, "a.txt"), "a\n");
  git("init", "-q");
  git("add", "-A");
  git("commit", "-qm", "first");
  plant(path.join(ws, "hook.sh"), markers, "fsmonitor");
  plant(path.join(ws, "hooks", "post-index-change"), markers, "hook");
  fs.writeFileSync(path.join(ws, "evil.cfg"), `[core]\n\tfsmonitor = ${ws}/hook.sh\n`);
  fs.appendFileSync(path.join(ws, ".git", "config"), `[core]\n\tfsmonitor = ${ws}/hook.sh\n\tuntrackedCache = true\n\thooksPath = ${ws}/hooks\n[include]\n\tpath = ${ws}/evil.cfg\n`);
  fs.writeFileSync(path.join(ws, "b.txt"), "untracked\n");
  const planted = path.join(ws, ".venv", "bin");
  plant(path.join(planted, "git"), markers, "planted-git", 'exec /usr/bin/git "$@"');
  return { ws, markers, planted };
}

describe("the @ file list's git", () => {
  it("lists tracked and untracked files and runs neither a planted git nor the repository's programs", async () => {
    const { ws, markers, planted } = hostile();
    process.env.ANTHROPIC_API_KEY = KEY;
    try {
      const files = await gitListFiles(ws, [ws], 100, [planted, ".", "", process.env.PATH].join(path.delimiter));
      assert.ok(files.includes("a.txt"));
      assert.ok(files.includes("b.txt"));
      assert.deepEqual(fs.readdirSync(markers), []);
      // the control: git as the list ran it before, from PATH with the editor's environment
      const pathEnv = [planted, process.env.PATH].join(path.delimiter);
      execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "-z"], { cwd: ws, env: { ...process.env, PATH: pathEnv } });
      const fired = fs.readdirSync(markers);
      assert.ok(fired.some((m) => m.startsWith("planted-git")), String(fired));
      assert.ok(fired.some((m) => m.startsWith("fsmonitor")), String(fired));
      assert.ok(fs.readFileSync(path.join(markers, fired[0]), "utf8").includes(KEY));
    } finally {
      delete process.env.ANTHROPIC_API_KEY;
    }
  });

  it("takes programs only from absolute entries outside the workspace, links included", () => {
    const { ws, planted } = hostile();
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), "safe-git-link-"));
    fs.symlinkSync(path.join(planted, "git"), path.join(outside, "git"));
    const pathEnv = [planted, outside, "rel/bin", ".", "/usr/bin", "/bin"].join(path.delimiter);
    assert.deepEqual(trustedPath(pathEnv, [ws]), [outside, "/usr/bin", "/bin"]);
    const git = findProgram("git", pathEnv, [ws]);
    assert.ok(git === "/usr/bin/git" || git === "/bin/git", git);
  });

  it("gives git no key and no configuration of the user's", () => {
    process.env.ANTHROPIC_API_KEY = KEY;
    try {
      const env = gitEnvironment("/w/.venv/bin:/usr/bin", ["/w"]);
      assert.equal(env.ANTHROPIC_API_KEY, undefined);
      assert.equal(env.PATH, "/usr/bin");
      assert.equal(env.GIT_CONFIG_NOSYSTEM, "1");
      assert.equal(env.GIT_CONFIG_GLOBAL, "/dev/null");
      assert.notEqual(env.HOME, os.homedir());
      assert.deepEqual(fs.readdirSync(env.HOME as string), []);
    } finally {
      delete process.env.ANTHROPIC_API_KEY;
    }
  });
});
