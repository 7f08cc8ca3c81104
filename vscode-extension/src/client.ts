/**
 * The language client: starts `lsp-agent serve` with vscode-languageclient, sends
 * `initializationOptions.agent`, wires the server's `agent/*` messages to the session store, and
 * restarts when an `lspAgent.*` setting changes.
 */
import * as vscode from "vscode";
import {
  LanguageClient,
  RevealOutputChannelOn,
  State,
  type LanguageClientOptions,
  type ServerOptions,
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
  type SessionUpdateParams,
} from "./shared/protocol";
import { answerEditorQuery, EDITOR_QUERY_KINDS, type QueryHost } from "./editorQueries";
import { commandLine, resolveServerCommand, startFailureMessage, which, type ServerCommand } from "./serverCommand";
import type { SessionStore } from "./sessions";

const SECTION = "lspAgent";
/** Settings the server does not read (the trace, the focus sent with prompts): no restart needed. */
const NO_RESTART = ["lspAgent.trace.server", "lspAgent.sendFocus"];

export class AgentClient implements vscode.Disposable {
  private client?: LanguageClient;
  private starting?: Promise<void>;
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
  }

  get running(): boolean {
    return this.client?.state === State.Running;
  }

  async start(): Promise<void> {
    if (!this.starting) this.starting = this.doStart().finally(() => (this.starting = undefined));
    return this.starting;
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.store.detach({ status: "stopped" });
    if (client) {
      try {
        await client.stop(2000);
      } catch (error) {
        this.log.warn(`stopping the server: ${String(error)}`);
      }
    }
  }

  /** A request to the server, started first if needed. */
  async request<R>(method: string, params: unknown): Promise<R> {
    if (!this.running) await this.start();
    if (!this.client) throw new Error("the LSP Agent server is not running");
    return this.client.sendRequest<R>(method, params);
  }

  notify(method: string, params: unknown): void {
    if (this.client && this.running) void this.client.sendNotification(method, params);
  }

  /** Runs one of the server's `lspAgent.*` commands (workspace/executeCommand). */
  async executeServerCommand<R>(command: string, args: unknown[]): Promise<R> {
    if (!this.running) await this.start();
    this.beforeCommand();
    const result = await this.request<R>("workspace/executeCommand", { command, arguments: args });
    this.onCommandResult(command, result);
    return result;
  }

  private async doStart(): Promise<void> {
    const config = vscode.workspace.getConfiguration(SECTION);
    const setting = config.get("serverCommand");
    let command = resolveServerCommand({ setting, which: (n) => which(n) });
    // only now ask for the selected Python (this may activate the Python extension)
    if (command.source === "python") command = resolveServerCommand({ setting, python: await selectedPython(), which: (n) => which(n) });
    this.command = command;
    this.log.info(`starting the server: ${commandLine(command)} (from ${command.source})`);
    this.store.setServer({ status: "starting" });
    const env = { ...process.env, ...stringValues(config.get<Record<string, unknown>>("serverEnv") ?? {}) };
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
    let attached = false;
    client.onDidChangeState((e) => {
      if (this.client !== client) return;
      if (e.newState === State.Stopped) this.store.detach({ status: "stopped", message: "The server stopped." });
      // vscode-languageclient restarted a crashed server: follow the sessions again
      if (e.newState === State.Running && attached) void this.store.attach(this);
    });
    this.client = client;
    try {
      // a missing executable is the common case: say so ourselves (and only once)
      if (!which(command.command)) throw new Error(`${command.command} is not an executable file (nor one on PATH)`);
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
    }
    const experimental = client.initializeResult?.capabilities.experimental as { agent?: AgentServerCapabilities } | undefined;
    this.capabilities = experimental?.agent;
    const info = client.initializeResult?.serverInfo;
    this.log.info(`server started: ${info?.name ?? "?"} ${info?.version ?? ""}; commands: ${JSON.stringify(this.capabilities?.commands ?? [])}`);
    attached = true;
    await this.store.attach(this);
  }

  private clientOptions(config: vscode.WorkspaceConfiguration): LanguageClientOptions {
    return {
      // every file: the agent reads open buffers and offers its quick fixes everywhere
      documentSelector: [{ scheme: "file" }, { scheme: "untitled" }],
      outputChannel: this.log,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions: { agent: agentOptions(config, this.context) },
      middleware: {
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
    for (const d of this.disposables) d.dispose();
    void this.stop();
  }
}

/** `initializationOptions.agent`: what this front-end can show, and the forwarded settings. */
export function agentOptions(config: vscode.WorkspaceConfiguration, context: vscode.ExtensionContext): AgentClientOptions {
  const forwarded: Record<string, unknown> = { ...(config.get<Record<string, unknown>>("config") ?? {}) };
  const model = config.get<string>("model");
  const mode = config.get<string>("mode");
  if (model) forwarded.model = model;
  if (mode) forwarded.mode = mode;
  const options: AgentClientOptions = {
    protocolVersion: PROTOCOL_VERSION as 1,
    ui: { chat: true, diff: true, permissions: true, questions: true, plan: true },
    forwardsDiagnostics: config.get<boolean>("forwardDiagnostics", true),
    clientInfo: { name: "lsp-agent-vscode", version: String(context.extension.packageJSON.version ?? "0") },
    editorQueries: [...EDITOR_QUERY_KINDS],
  };
  if (Object.keys(forwarded).length) options.config = forwarded;
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
