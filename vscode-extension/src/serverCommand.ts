/**
 * Which command starts `lsp-agent serve`. Pure (no `vscode` import) so it is unit-tested:
 * the setting `lspAgent.serverCommand`, else `lsp-agent` on PATH, else `python -m lsp_agent serve`
 * with the selected Python.
 */
import * as fs from "fs";
import * as path from "path";

export interface ServerCommand {
  command: string;
  args: string[];
  /** Where the command came from, for messages and the log. */
  source: "setting" | "path" | "python";
}

export interface ResolveInputs {
  /** `lspAgent.serverCommand`: a full command line as an array, or the path of `lsp-agent`. */
  setting: unknown;
  /** The Python the user selected (Python extension or `python.defaultInterpreterPath`), if any. */
  python?: string;
  which: (name: string) => string | undefined;
}

export function resolveServerCommand({ setting, python, which }: ResolveInputs): ServerCommand {
  if (Array.isArray(setting) && setting.length > 0 && setting.every((s) => typeof s === "string")) {
    const [command, ...args] = setting as string[];
    return { command, args, source: "setting" };
  }
  if (typeof setting === "string" && setting.trim()) {
    return { command: setting.trim(), args: ["serve"], source: "setting" };
  }
  const onPath = which("lsp-agent");
  if (onPath) return { command: onPath, args: ["serve"], source: "path" };
  const interpreter = python || which("python3") || which("python") || "python3";
  return { command: interpreter, args: ["-m", "lsp_agent", "serve"], source: "python" };
}

/** `which`, on the given PATH. */
export function which(name: string, envPath = process.env.PATH ?? ""): string | undefined {
  if (name.includes(path.sep)) return isExecutable(name) ? name : undefined;
  for (const dir of envPath.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

export function commandLine(c: ServerCommand): string {
  return [c.command, ...c.args].map((a) => (/\s/.test(a) ? JSON.stringify(a) : a)).join(" ");
}

/** A message that says what failed and how to fix it. */
export function startFailureMessage(c: ServerCommand, error: unknown): string {
  const detail = error instanceof Error ? error.message : String(error);
  const line = commandLine(c);
  if (c.source === "setting") {
    return `LSP Agent: the server command from the setting lspAgent.serverCommand (${line}) failed to start: ${detail}. Fix the setting, or clear it to use lsp-agent from PATH.`;
  }
  if (c.source === "python") {
    return `LSP Agent: lsp-agent is not on PATH and "${line}" failed: ${detail}. Install it: run scripts/install in a clone of the lsp-agent repository (it links lsp-agent into ~/.local/bin; restart VS Code if that folder was not on PATH yet), or "pipx install ." / "uv tool install ." there. Or set lspAgent.serverCommand to the lsp-agent executable's full path.`;
  }
  return `LSP Agent: "${line}" failed to start: ${detail}. Run "lsp-agent doctor" in a terminal, or set lspAgent.serverCommand.`;
}
