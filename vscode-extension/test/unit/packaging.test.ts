/**
 * What `npm ci` installs to build and package the extension: none of the e2e's packages and
 * nothing that builds native code or downloads at install time, so the .vsix is made on a machine
 * with only Node (scripts/package). The e2e's packages live in test/e2e/package.json.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";

const ROOT = path.resolve(__dirname, "../../..");
type Lock = { packages: Record<string, { hasInstallScript?: boolean; optional?: boolean; dev?: boolean }> };
const readJson = (file: string): any => JSON.parse(fs.readFileSync(path.join(ROOT, file), "utf8"));
const names = (lock: Lock): Set<string> =>
  new Set(Object.keys(lock.packages).filter(Boolean).map((key) => key.slice(key.lastIndexOf("node_modules/") + "node_modules/".length)));

/** Packages whose install script `ignore-scripts` skips, and why that is safe. */
const SCRIPT_NOT_NEEDED: Record<string, string> = {
  esbuild: "the binary comes from its @esbuild/<platform> package",
  "@vscode/vsce-sign": "only for signing on publish; its binary comes from its @vscode/vsce-sign-<platform> package",
  keytar: "an optional dependency of vsce for publishing tokens; never loaded by `vsce package`",
};

describe("the extension's dependency tree", () => {
  const lock: Lock = readJson("package-lock.json");
  const e2eLock: Lock = readJson("test/e2e/package-lock.json");

  it("holds none of the e2e's packages", () => {
    const e2eOnly = Object.keys(readJson("test/e2e/package.json").devDependencies);
    assert.deepEqual(e2eOnly.sort(), ["code-server", "playwright-core"]);
    const ours = names(lock);
    assert.deepEqual(e2eOnly.filter((name) => ours.has(name)), []);
    const e2eBuilds = Object.entries(e2eLock.packages).filter(([, p]) => p.hasInstallScript).map(([key]) => key);
    assert.ok(e2eBuilds.length > 0, "the e2e tree is where the native builds are");
    assert.deepEqual(e2eBuilds.filter((key) => key in lock.packages), []);
  });

  it("runs no install scripts, and none it skips is needed", () => {
    const npmrc = fs.readFileSync(path.join(ROOT, ".npmrc"), "utf8");
    assert.match(npmrc, /^ignore-scripts=true$/m);
    assert.doesNotMatch(npmrc, /unsafe-perm/); // npm >= 7 warns about it on every command
    const withScripts = Object.entries(lock.packages)
      .filter(([, p]) => p.hasInstallScript)
      .map(([key]) => key.slice("node_modules/".length));
    assert.deepEqual(withScripts.filter((name) => !(name in SCRIPT_NOT_NEEDED)), []);
    assert.equal(lock.packages["node_modules/keytar"]?.optional ?? true, true);
  });

  it("bundles everything it runs: no runtime dependencies in the .vsix", () => {
    const manifest = readJson("package.json");
    assert.equal(manifest.dependencies, undefined);
    assert.equal(manifest.scripts["vscode:prepublish"], "npm run build");
    assert.match(manifest.main, /^\.\/dist\//);
  });
});
