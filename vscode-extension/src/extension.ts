/**
 * Activation: the shared objects (features/deps.ts), then each feature registers its own
 * commands, views and listeners (features/*.ts), and the panel's messages are routed to them.
 */
import * as vscode from "vscode";
import { openCodeRef, openLocation } from "./codeRefLinks";
import { register as registerApprovals } from "./features/approvals";
import { register as registerCodeReview } from "./features/codeReview";
import { register as registerCommitMessage } from "./features/commitMessage";
import { register as registerCompletion } from "./features/completion";
import { createDeps } from "./features/deps";
import { register as registerDiagnostics } from "./features/diagnostics";
import { register as registerPanel } from "./features/panel";
import { register as registerPrompts } from "./features/prompts";
import { register as registerReview } from "./features/review";
import { register as registerSearch } from "./features/search";
import { register as registerServer } from "./features/server";
import { register as registerSessions } from "./features/sessions";
import { router, type Routes } from "./features/webviewRoutes";
import type { WebviewMessage } from "./shared/reducer";

export { Commands } from "./features/commands";

export function activate(context: vscode.ExtensionContext) {
  let route: (msg: WebviewMessage) => Promise<void> = async () => undefined;
  const deps = createDeps(context, () => route);
  const { store, client, reviews, chat, log } = deps;
  registerDiagnostics(context, deps);
  registerServer(context, deps);
  registerPanel(context, deps);
  const prompts = registerPrompts(context, deps);
  const review = registerReview(context, deps);
  registerCommitMessage(context, deps);
  const approvals = registerApprovals(context, deps);
  const sessions = registerSessions(context, deps, review);
  const search = registerSearch(context, deps);
  registerCodeReview(context, deps);
  registerCompletion(context, deps);
  const routes: Routes = {
    prompt: (msg) => prompts.ask(msg.text, msg.mentions, msg.noFocus, { images: msg.images, until: msg.until }),
    complete: async (msg) => chat.send({ type: "completions", id: msg.id, items: await prompts.complete(msg.trigger, msg.query) }),
    compact: () => store.compact(),
    stop: () => store.cancel(),
    retry: () => prompts.retry(),
    newSession: () => sessions.newSession(),
    selectSession: (msg) => store.open(msg.sessionId),
    refreshSessions: () => store.refreshSessions(),
    searchSessions: () => search.searchSessions(""),
    undo: () => prompts.undo(),
    redo: () => prompts.redo(),
    setConfigOption: (msg) => store.setConfigOption(msg.configId, msg.value),
    permission: (msg) => approvals.answer(msg.key, msg.optionId, msg.reason),
    viewDiff: (msg) => approvals.viewDiff(msg.key, msg.uri),
    question: (msg) => store.answerQuestion(msg.key, msg.result),
    openLocation: (msg) => openLocation(msg.uri, msg.range),
    openCodeRef: (msg) => openCodeRef(msg),
    resolve: (msg) => review.resolve(msg.action, { hunkIds: msg.hunkIds, uris: msg.uris, reason: msg.reason }),
    comment: (msg) => reviews.comment(msg.hunkId, msg.text),
    sendComments: () => reviews.sendComments(),
    rewind: (msg) => review.rewind(msg.messageId, msg.scope),
    showLog: () => log.show(),
  };
  route = router(routes);
  client.start().catch((error) => log.error(String(error)));
  return { store, client, reviews };
}

export function deactivate(): void {
  // the client is disposed through context.subscriptions
}
