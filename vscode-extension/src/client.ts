/**
 * The language client: starts `lsp-agent serve` with vscode-languageclient, sends
 * `initializationOptions.agent`, wires the server's `agent/*` messages to the session store, and
 * restarts when an `lspAgent.*` setting changes.
 */
import * as vscode from "vscode";
import {
  LanguageClient,
  MessageType,
  RevealOutputChannelOn,
  ShowMessageNotification,
  State,
  type LanguageClientOptions,
  type ServerOptions,
  type ShowMessageParams,
  type WorkDoneProgressBegin,
  type WorkDoneProgressEnd,
  type WorkDoneProgressReport,
} from "vscode-languageclient/node";
import {
  Methods,
  PROTOCOL_VERSION,
  ServerCommands,
  type AgentClientOptions,
  type AgentServerCapabilities,
  type AskQuestionParams,
  type EditorQueryParams,
  type RequestPermissionParams,
  type SaveDocumentsParams,
  type SessionUpdateParams,
} from "./shared/protocol";
import { saveDocuments, type SaveHost } from "./saveDocuments";
import { answerEditorQuery, EDITOR_QUERY_KINDS, type QueryHost } from "./editorQueries";
import { commandLine, resolveServerCommand, startFailureMessage, which, type ServerCommand } from "./serverCommand";
import { forwardedConfig, userValue } from "./settingsScope";
import type { SessionStore } from "./sessions";
import type { ServerStatus } from "./shared/reducer";

const SECTION = "lspAgent";
/** Settings the server does not read (the trace, the focus sent with prompts): no restart needed. */
const NO_RESTART = ["lspAgent.trace.server", "lspAgent.sendFocus"];
/** The work-done progress the server shows while it builds its agent after `initialize` (docs/protocol.md §0). */
export const STARTING_TOKEN = "lsp-agent/starting";
/** How the server's `window/showMessage` of a failed start begins. */
const FAILED_PREFIX = "lsp-agent failed to start";
const STARTING: ServerStatus = { status: "starting", message: "Starting the LSP Agent server…" };

export class AgentClient implements vscode.Disposable {
  private client?: LanguageClient;
  private starting?: Promise<void>;
  /** The server's "starting" progress is open: it answered `initialize` and still builds its agent. */
  private hostStarting = false;
  /** Why the server said it failed to start (its progress end, then its message). */
  private failure?: string;
  /** Waiting for `initialize` to be answered: what the server reports meanwhile is applied after it. */
  private initializing = false;
  private disposed = false;
  private readonly disposables: vscode.Disposable[] = [];
  capabilities?: AgentServerCapabilities;
  command?: ServerCommand;
  /** Called before a server command runs (code actions included): the diagnostics go first. */
  beforeCommand: () => void = () => undefined;
  /** Called with the result of a server command run from anywhere (code actions included). */
  onCommandResult: (command: string, result: unknown) => void = () => undefined;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly store: SessionStore,
    readonly log: vscode.LogOutputChannel,
  ) {
    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration(SECTION) && !NO_RESTART.some((s) => e.affectsConfiguration(s))) {
          this.log.info("settings changed: restarting the server");
          void this.restart();
        }
      }),
    );
    store.startServer = () => this.ensureStarted();
  }

  get running(): boolean {
    return this.client?.state === State.Running;
  }

  async start(): Promise<void> {
    if (!this.starting) {
      // at once: a command issued from now on waits for this start
      this.store.setServer(STARTING);
      this.starting = this.doStart().finally(() => (this.starting = undefined));
    }
    return this.starting;
  }

  /** A request waits on a stopped server: start one, unless a start (ours or the client's own restart) is under way. */
  private ensureStarted(): void {
    const state = this.client?.state;
    if (this.disposed || this.starting || state === State.Starting || state === State.Running) return;
    this.start().catch(() => undefined);
  }

  async restart(): Promise<void> {
    // requests issued meanwhile wait for the new server
    await this.stop(true);
    await this.start();
  }

  async stop(restarting = false): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.store.detach(restarting ? STARTING : { status: "stopped" });
    if (client) {
      try {
        await client.stop(2000);
      } catch (error) {
        this.log.warn(`stopping the server: ${String(error)}`);
      }
    }
  }

  /** A request to the server: sent once it is up (a stopped one is started first); a failed start's reason otherwise. */
  async request<R>(method: string, params: unknown, token?: vscode.CancellationToken): Promise<R> {
    await this.store.connected();
    const client = this.client;
    if (!client) throw new Error("the LSP Agent server stopped");
    return token ? client.sendRequest<R>(method, params, token) : client.sendRequest<R>(method, params);
  }

  /** The running server's standard capabilities (e.g. `inlineCompletionProvider`, issue 36). */
  get serverCapabilities(): { inlineCompletionProvider?: unknown } | undefined {
    return this.running ? this.client?.initializeResult?.capabilities : undefined;
  }

  notify(method: string, params: unknown): void {
    if (this.client && this.running) void this.client.sendNotification(method, params);
  }

  /** Runs one of the server's `lspAgent.*` commands (workspace/executeCommand). */
  async executeServerCommand<R>(command: string, args: unknown[]): Promise<R> {
    await this.store.connected();
    this.beforeCommand();
    const result = await this.request<R>("workspace/executeCommand", { command, arguments: args });
    this.onCommandResult(command, result);
    return result;
  }

  private async doStart(): Promise<void> {
    const config = vscode.workspace.getConfiguration(SECTION);
    const setting = userValue(config, "serverCommand"); // never a workspace's (settingsScope.ts)
    let command = resolveServerCommand({ setting, which: (n) => which(n) });
    // only now ask for the selected Python (this may activate the Python extension)
    if (command.source === "python") command = resolveServerCommand({ setting, python: await selectedPython(), which: (n) => which(n) });
    this.command = command;
    this.log.info(`starting the server: ${commandLine(command)} (from ${command.source})`);
    this.hostStarting = false;
    this.failure = undefined;
    const env = { ...process.env, ...stringValues(userValue<Record<string, unknown>>(config, "serverEnv") ?? {}) };
    const serverOptions: ServerOptions = { command: command.command, args: command.args, options: { env } };
    const client = new LanguageClient("lspAgent", "LSP Agent", serverOptions, this.clientOptions(config));
    client.onNotification(Methods.sessionUpdate.name, (params: SessionUpdateParams) => this.store.handleUpdate(params));
    client.onRequest(Methods.requestPermission.name, (params: RequestPermissionParams, token) =>
      this.store.requestPermission(params, (cancel) => token.onCancellationRequested(cancel)),
    );
    client.onRequest(Methods.askQuestion.name, (params: AskQuestionParams, token) =>
      this.store.askQuestion(params, (cancel) => token.onCancellationRequested(cancel)),
    );
    client.onRequest(Methods.editorQuery.name, (params: EditorQueryParams) => answerEditorQuery(params, vscodeQueryHost));
    client.onRequest(Methods.saveDocuments.name, (params: SaveDocumentsParams) => saveDocuments(params, vscodeSaveHost));
    // replaces the client's own handler: a failed start is shown with "Show Log"
    client.onNotification(ShowMessageNotification.type, (params: ShowMessageParams) => {
      if (this.client === client) this.showMessage(params);
    });
    let attached = false;
    client.onDidChangeState((e) => {
      // before the first start has ended, doStart reports what happens
      if (this.client !== client || !attached) return;
      const failed = this.store.serverStatus.status === "failed";
      if ((e.newState === State.Stopped || e.newState === State.StartFailed) && !failed) {
        this.store.detach({ status: "stopped", message: "The LSP Agent server stopped (see LSP Agent: Show Log)." });
      }
      // vscode-languageclient restarts a crashed server: requests wait for it, then the sessions are followed again
      if (e.newState === State.Starting) {
        this.hostStarting = false;
        this.store.detach(STARTING);
      }
      if (e.newState === State.Running) void this.store.attach(this, this.hostStarting ? STARTING : undefined);
    });
    const old = this.client;
    if (old) void old.dispose().catch(() => undefined);
    this.client = client;
    try {
      // a missing executable is the common case: say so ourselves (and only once)
      if (!which(command.command)) throw new Error(`${command.command} is not an executable file (nor one on PATH)`);
      this.initializing = true;
      await client.start();
    } catch (error) {
      this.client = undefined;
      const message = startFailureMessage(command, error);
      this.log.error(message);
      this.store.detach({ status: "failed", message });
      void client.dispose().catch(() => undefined);
      void vscode.window.showErrorMessage(message, "Open Settings", "Show Log").then((pick) => {
        if (pick === "Open Settings") void vscode.commands.executeCommand("workbench.action.openSettings", "lspAgent.serverCommand");
        if (pick === "Show Log") this.log.show();
      });
      throw new Error(message);
    } finally {
      this.initializing = false;
    }
    const experimental = client.initializeResult?.capabilities.experimental as { agent?: AgentServerCapabilities } | undefined;
    this.capabilities = experimental?.agent;
    const info = client.initializeResult?.serverInfo;
    this.log.info(`server started: ${info?.name ?? "?"} ${info?.version ?? ""}; commands: ${JSON.stringify(this.capabilities?.commands ?? [])}`);
    attached = true;
    // the server answered `initialize`; it may still be building its agent (its progress says so)
    if (this.failure) this.store.detach({ status: "failed", message: this.failure });
    else await this.store.attach(this, this.hostStarting ? STARTING : undefined);
  }

  /** `$/progress` of the server's start: "starting…" meanwhile, then "ready" or "failed to start". */
  private startProgress(client: LanguageClient, params: WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd): void {
    if (this.client !== client) return;
    if (params.kind === "begin") {
      this.hostStarting = true;
      if (this.store.serverStatus.status === "running") this.store.setServer(STARTING);
    } else if (params.kind === "end") {
      this.hostStarting = false;
      if (params.message === "failed to start") this.fail(`${FAILED_PREFIX} (see LSP Agent: Show Log)`, false);
      else if (this.store.serverStatus.status === "starting" && !this.initializing) this.store.setServer({ status: "running" });
    }
  }

  /** `window/showMessage`: shown as the client would, but a failed start marks the server failed and offers the log. */
  private showMessage(params: ShowMessageParams): void {
    if (params.type === MessageType.Error && params.message.startsWith(FAILED_PREFIX)) {
      this.fail(params.message, true);
      return;
    }
    if (params.type === MessageType.Error) void vscode.window.showErrorMessage(params.message);
    else if (params.type === MessageType.Warning) void vscode.window.showWarningMessage(params.message);
    else void vscode.window.showInformationMessage(params.message);
  }

  /** The server answered `initialize` but could not build its agent: every request fails with `message`. */
  private fail(message: string, notify: boolean): void {
    this.failure = message;
    this.log.error(message);
    // before `initialize` is answered, doStart reports it then
    if (!this.initializing) this.store.detach({ status: "failed", message });
    if (!notify) return;
    void vscode.window.showErrorMessage(message, "Show Log", "Restart Server").then((pick) => {
      if (pick === "Show Log") this.log.show();
      if (pick === "Restart Server") void this.restart();
    });
  }

  private clientOptions(config: vscode.WorkspaceConfiguration): LanguageClientOptions {
    return {
      // every file: the agent reads open buffers and offers its quick fixes everywhere
      documentSelector: [{ scheme: "file" }, { scheme: "untitled" }],
      outputChannel: this.log,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions: { agent: agentOptions(config, this.context) },
      middleware: {
        handleWorkDoneProgress: (token, params, next) => {
          if (token === STARTING_TOKEN && this.client) this.startProgress(this.client, params);
          next(token, params);
        },
        executeCommand: async (command, args, next) => {
          this.beforeCommand();
          const result = await next(command, args);
          if ((Object.values(ServerCommands) as string[]).includes(command)) this.onCommandResult(command, result);
          return result;
        },
      },
      initializationFailedHandler: (error) => {
        this.log.error(`initialize failed: ${error instanceof Error ? error.message : String(error)}`);
        return false;
      },
    };
  }

  dispose(): void {
    this.disposed = true;
    for (const d of this.disposables) d.dispose();
    void this.stop();
  }
}

/** `initializationOptions.agent`: what this front-end can show, and the forwarded settings. */
export function agentOptions(config: vscode.WorkspaceConfiguration, context: vscode.ExtensionContext): AgentClientOptions {
  const forwarded = forwardedConfig(config); // the user's layer apart from the workspace's
  const options: AgentClientOptions = {
    protocolVersion: PROTOCOL_VERSION as 1,
    ui: { chat: true, diff: true, permissions: true, questions: true, plan: true },
    forwardsDiagnostics: config.get<boolean>("forwardDiagnostics", true),
    clientInfo: { name: "lsp-agent-vscode", version: String(context.extension.packageJSON.version ?? "0") },
    editorQueries: [...EDITOR_QUERY_KINDS],
    savesDocuments: true,
  };
  if (forwarded.config) options.config = forwarded.config;
  if (forwarded.workspaceConfig) options.workspaceConfig = forwarded.workspaceConfig;
  return options;
}

/** `agent/editor/query` through VS Code's built-in provider commands (the document loaded first, not shown). */
const vscodeQueryHost: QueryHost = {
  async execute(command, target) {
    if (target.uri === undefined) return vscode.commands.executeCommand(command, target.query ?? "");
    const uri = vscode.Uri.parse(target.uri);
    await vscode.workspace.openTextDocument(uri);
    const args: unknown[] = [uri];
    if (target.position) args.push(new vscode.Position(target.position.line, target.position.character));
    return vscode.commands.executeCommand(command, ...args);
  },
};

/** `agent/documents/save` over this window's open documents. */
const vscodeSaveHost: SaveHost = {
  find(uri) {
    const wanted = vscode.Uri.parse(uri).toString();
    return vscode.workspace.textDocuments.find((d) => d.uri.toString() === wanted);
  },
};

/** The Python the user selected: the Python extension's, else `python.defaultInterpreterPath`. */
async function selectedPython(): Promise<string | undefined> {
  try {
    const ext = vscode.extensions.getExtension<PythonApi>("ms-python.python");
    if (ext) {
      const api = ext.isActive ? ext.exports : await ext.activate();
      const env = api?.environments?.getActiveEnvironmentPath?.();
      if (env?.path) return env.path;
      const exec = api?.settings?.getExecutionDetails?.()?.execCommand;
      if (exec?.length) return exec[0];
    }
  } catch {
    // no Python extension, or an API this version does not have
  }
  const setting = vscode.workspace.getConfiguration("python").get<string>("defaultInterpreterPath");
  return setting && setting !== "python" ? setting : undefined;
}

interface PythonApi {
  environments?: { getActiveEnvironmentPath?(): { path?: string } | undefined };
  settings?: { getExecutionDetails?(): { execCommand?: string[] } | undefined };
}

function stringValues(o: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null && v !== undefined).map(([k, v]) => [k, String(v)]));
}
