/** Forwards the editor's diagnostics (every language server's) to the agent as `agent/diagnostics`. */
import * as vscode from "vscode";
import type { Diagnostic, DiagnosticsParams } from "./shared/protocol";

const DEBOUNCE_MS = 300;

export class DiagnosticsForwarder implements vscode.Disposable {
  private readonly pending = new Set<string>();
  private timer?: ReturnType<typeof setTimeout>;
  private readonly subscription: vscode.Disposable;

  constructor(private readonly send: (params: DiagnosticsParams) => void, private readonly enabled: () => boolean) {
    this.subscription = vscode.languages.onDidChangeDiagnostics((e) => {
      for (const uri of e.uris) this.pending.add(uri.toString());
      this.schedule();
    });
  }

  /** Sends everything known now (after the server (re)started). */
  sendAll(): void {
    for (const [uri] of vscode.languages.getDiagnostics()) this.pending.add(uri.toString());
    this.flush();
  }

  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.flush(), DEBOUNCE_MS);
  }

  /** Sends what is pending now: before a prompt or a command, so the agent reads the latest. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const uris = [...this.pending];
    this.pending.clear();
    if (!this.enabled()) return;
    const items = uris
      .map((u) => vscode.Uri.parse(u))
      .filter((u) => u.scheme === "file" || u.scheme === "untitled")
      .map((uri) => {
        const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
        const item: DiagnosticsParams["items"][number] = { uri: uri.toString(), diagnostics: vscode.languages.getDiagnostics(uri).map(toWire) };
        if (doc) item.version = doc.version;
        return item;
      });
    if (items.length) this.send({ items });
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.subscription.dispose();
  }
}

export function toWire(d: vscode.Diagnostic): Diagnostic {
  const out: Diagnostic = {
    range: {
      start: { line: d.range.start.line, character: d.range.start.character },
      end: { line: d.range.end.line, character: d.range.end.character },
    },
    message: d.message,
    severity: d.severity + 1, // vscode counts from Error = 0, LSP from Error = 1
  };
  if (d.source) out.source = d.source;
  const code = typeof d.code === "object" ? d.code.value : d.code;
  if (code !== undefined) out.code = code;
  return out;
}
