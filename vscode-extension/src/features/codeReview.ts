/**
 * "LSP Agent: Review My Changes…": the agent reviews the person's changes (git) with
 * `agent/codeReview/run`. The server publishes the findings as diagnostics, so they are listed in
 * the Problems view (source "lsp-agent") and their quick fixes "Fix with agent" / "Dismiss" come
 * from the server's code actions through the language client; this command only picks what to
 * review, shows progress and says how it went.
 */
import * as vscode from "vscode";
import { Methods, type CodeReviewRunParams, type CodeReviewRunResult } from "../shared/protocol";
import { Commands } from "./commands";
import { command, type Deps } from "./deps";

interface ScopeItem extends vscode.QuickPickItem {
  params: CodeReviewRunParams | "base";
}

const SCOPES: ScopeItem[] = [
  { label: "Uncommitted changes", description: "the work tree against HEAD", params: {} },
  { label: "Staged changes", description: "git diff --cached", params: { staged: true } },
  { label: "Changes against a branch…", description: "the work tree against a revision", params: "base" },
];

/** What to review: the argument when a caller (a test, a keybinding) gives one, else asked. */
async function pickScope(given?: CodeReviewRunParams): Promise<CodeReviewRunParams | undefined> {
  if (given && typeof given === "object") return given;
  const picked = await vscode.window.showQuickPick(SCOPES, { placeHolder: "Review which changes?" });
  if (!picked) return undefined;
  if (picked.params !== "base") return picked.params;
  const base = await vscode.window.showInputBox({ prompt: "Compare the work tree with (a branch, tag or commit)", value: "main" });
  return base ? { base } : undefined;
}

/** "2 findings (1 error)": how the review went, in a line. */
export function reviewSummary(result: CodeReviewRunResult): string {
  const errors = result.findings.filter((f) => f.severity === 1).length;
  const count = result.findings.length;
  const found = count === 0 ? "no findings" : `${count} finding${count === 1 ? "" : "s"}${errors ? ` (${errors} error${errors === 1 ? "" : "s"})` : ""}`;
  return result.summary ? `Review: ${found}. ${result.summary}` : `Review: ${found}.`;
}

export function register(context: vscode.ExtensionContext, { client, forwarder }: Deps): void {
  context.subscriptions.push(
    command(Commands.reviewChanges, async (given?: CodeReviewRunParams) => {
      const params = await pickScope(given);
      if (!params) return undefined;
      const folder = vscode.workspace.workspaceFolders?.[0]?.uri.toString();
      forwarder.flush();
      try {
        const result = await vscode.window.withProgress(
          { location: vscode.ProgressLocation.Notification, title: "LSP Agent: reviewing your changes…" },
          () => client.request<CodeReviewRunResult>(Methods.codeReviewRun.name, folder ? { ...params, workspaceFolder: folder } : params),
        );
        const line = reviewSummary(result);
        if (result.findings.length) {
          void vscode.window.showInformationMessage(line, "Show Problems").then((choice) => {
            if (choice) void vscode.commands.executeCommand("workbench.actions.view.problems");
          });
        } else {
          void vscode.window.showInformationMessage(line);
        }
        return result;
      } catch (error) {
        void vscode.window.showErrorMessage(`LSP Agent: the review failed: ${error instanceof Error ? error.message : String(error)}`);
        return undefined;
      }
    }),
  );
}
