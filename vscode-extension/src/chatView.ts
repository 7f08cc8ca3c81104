/**
 * The side panel: a WebviewView with a strict CSP (scripts only with this load's nonce, styles and
 * scripts only from the extension's dist/). The webview says `ready` before anything is posted to
 * it; then it gets the whole state, and after that each update. Hiding the panel may destroy the
 * page: when it comes back it says `ready` again and gets the state again.
 */
import * as crypto from "crypto";
import * as vscode from "vscode";
import type { HostMessage, WebviewMessage } from "./shared/reducer";
import type { ReviewStore } from "./review";
import type { SessionStore } from "./sessions";

export const CHAT_VIEW_ID = "lspAgent.chat";

export class ChatViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  private view?: vscode.WebviewView;
  private ready = false;
  private readonly subscriptions: { dispose(): void }[];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly store: SessionStore,
    private readonly reviews: ReviewStore,
    private readonly onMessage: (msg: WebviewMessage) => Promise<void>,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.subscriptions = [store.onMessage((msg) => this.post(msg)), reviews.onChange((review) => this.post({ type: "review", review }))];
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    this.ready = false;
    const dist = vscode.Uri.joinPath(this.extensionUri, "dist");
    view.webview.options = { enableScripts: true, localResourceRoots: [dist] };
    view.webview.html = html(view.webview, dist);
    view.webview.onDidReceiveMessage((msg: WebviewMessage) => {
      if (msg.type === "ready" || msg.type === "resync") {
        this.ready = true;
        void view.webview.postMessage({ type: "state", state: { ...this.store.snapshot(), review: this.reviews.snapshot() } } satisfies HostMessage);
        return;
      }
      this.onMessage(msg).catch((error: unknown) => {
        const text = error instanceof Error ? error.message : String(error);
        this.log.error(`${msg.type}: ${text}`);
        void vscode.window.showErrorMessage(`LSP Agent: ${text}`);
      });
    });
    view.onDidDispose(() => {
      if (this.view === view) {
        this.view = undefined;
        this.ready = false;
      }
    });
  }

  get visible(): boolean {
    return !!this.view?.visible;
  }

  /** Opens the panel (the view container first, when it was never shown). */
  async reveal(preserveFocus = false): Promise<void> {
    if (this.view) this.view.show(preserveFocus);
    else await vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`);
  }

  /** Posts to the panel (dropped while it is not shown: it gets the whole state when it is). */
  send(msg: HostMessage): void {
    this.post(msg);
  }

  private post(msg: HostMessage): void {
    if (this.view && this.ready) void this.view.webview.postMessage(msg);
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
  }
}

function html(webview: vscode.Webview, dist: vscode.Uri): string {
  const nonce = crypto.randomBytes(16).toString("base64");
  const script = webview.asWebviewUri(vscode.Uri.joinPath(dist, "webview.js"));
  const style = webview.asWebviewUri(vscode.Uri.joinPath(dist, "webview.css"));
  const csp = [
    "default-src 'none'",
    `style-src ${webview.cspSource}`,
    `font-src ${webview.cspSource}`,
    `img-src ${webview.cspSource} data:`,
    `script-src 'nonce-${nonce}'`,
  ].join("; ");
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style}">
<title>LSP Agent</title>
</head>
<body>
<div id="app" data-testid="chat-root"></div>
<script nonce="${nonce}" src="${script}"></script>
</body>
</html>`;
}
