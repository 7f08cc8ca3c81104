/**
 * git (for the `@` file list) run so the project cannot make it start a program of its own:
 * the git binary comes from an absolute PATH entry outside every workspace folder (an activated
 * `.venv/bin` or `node_modules/.bin` could hold a planted `git`), and neither the entry nor the
 * file's real path lies in one; its environment is built from nothing (no key of the editor's,
 * no user or system git configuration, an empty HOME); `-c` overrides switch off every
 * repository setting that names a program for `ls-files`; a timeout kills it. Mirrors the
 * server's `lsp_agent/system/git_process.py` (docs/security.md, "the agent's own git").
 */
import { execFile } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

export const GIT_SAFE_ARGS: readonly string[] = [
  "--no-pager",
  "-c", "core.fsmonitor=false",
  "-c", "core.untrackedCache=false",
  "-c", "core.hooksPath=" + (process.platform === "win32" ? "NUL" : "/dev/null"),
  "-c", "core.pager=cat",
  "-c", "credential.helper=",
  "-c", "protocol.allow=never",
];

const GIT_TIMEOUT_MS = 10_000;

function real(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

/** Whether `p` (as written or with its links followed) is one of `folders` or lies in one. */
export function insideAny(p: string, folders: readonly string[]): boolean {
  const candidates = [path.resolve(p), real(p)];
  return folders.some((folder) =>
    [path.resolve(folder), real(folder)].some((root) => candidates.some((c) => c === root || c.startsWith(root.endsWith(path.sep) ? root : root + path.sep))),
  );
}

/** The PATH entries a program may come from: absolute, outside `avoid`. */
export function trustedPath(pathEnv: string | undefined, avoid: readonly string[]): string[] {
  const kept: string[] = [];
  for (const entry of (pathEnv ?? "").split(path.delimiter)) {
    if (entry && path.isAbsolute(entry) && !kept.includes(entry) && !insideAny(entry, avoid)) kept.push(entry);
  }
  return kept;
}

/** `name` from the trusted PATH entries, a regular executable file outside `avoid`; else undefined. */
export function findProgram(name: string, pathEnv: string | undefined, avoid: readonly string[]): string | undefined {
  const names = process.platform === "win32" ? [`${name}.exe`, `${name}.cmd`, name] : [name];
  for (const entry of trustedPath(pathEnv, avoid)) {
    for (const file of names) {
      const candidate = path.join(entry, file);
      try {
        if (!fs.statSync(candidate).isFile() || insideAny(candidate, avoid)) continue;
        fs.accessSync(candidate, fs.constants.X_OK);
        return candidate;
      } catch {
        continue;
      }
    }
  }
  return undefined;
}

let emptyHome: string | undefined;

/** The whole environment of a git process: trusted PATH, an empty HOME, no global or system config. */
export function gitEnvironment(pathEnv: string | undefined, avoid: readonly string[]): NodeJS.ProcessEnv {
  emptyHome ??= fs.mkdtempSync(path.join(os.tmpdir(), "lsp-agent-git-home-"));
  return {
    PATH: trustedPath(pathEnv, avoid).join(path.delimiter),
    HOME: emptyHome,
    XDG_CONFIG_HOME: emptyHome,
    ...(process.platform === "win32" ? { SYSTEMROOT: process.env.SYSTEMROOT } : {}),
    LC_ALL: "C",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: process.platform === "win32" ? "NUL" : "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
    GIT_OPTIONAL_LOCKS: "0",
  };
}

/** `git ls-files` of `cwd` (tracked and untracked, ignore rules respected), run as the module says. */
export function gitListFiles(cwd: string, avoid: readonly string[], maxFiles: number, pathEnv = process.env.PATH): Promise<string[]> {
  const git = findProgram("git", pathEnv, avoid);
  if (!git) return Promise.reject(new Error("git was not found outside the workspace folders"));
  const args = [...GIT_SAFE_ARGS, "ls-files", "--cached", "--others", "--exclude-standard", "-z"];
  return new Promise((resolve, reject) => {
    execFile(git, args, { cwd, env: gitEnvironment(pathEnv, avoid), maxBuffer: 64 * 1024 * 1024, timeout: GIT_TIMEOUT_MS, killSignal: "SIGKILL" }, (error, stdout) => {
      if (error) reject(error);
      else resolve(stdout.split("\0").filter(Boolean).slice(0, maxFiles));
    });
  });
}
