/**
 * `agent/editor/query`: the server asks what the editor's language servers know (definition,
 * references, hover, symbols…) and this window answers with VS Code's own `vscode.execute*Provider`
 * commands, so the agent sees every provider the user has (TypeScript, Pylance, rust-analyzer…).
 * VS Code's answers are its API objects; they go back as plain LSP JSON (Location, LocationLink,
 * Hover, DocumentSymbol, SymbolInformation). The conversion is duck-typed and free of the `vscode`
 * module so it is unit-tested under plain Node; the host (`QueryHost`) is the only VS Code part.
 */
import type { EditorQueryKind, EditorQueryParams, EditorQueryResult, Position, Range } from "./shared/protocol";

/** Every kind this extension answers (advertised as `initializationOptions.agent.editorQueries`). */
export const EDITOR_QUERY_KINDS: readonly EditorQueryKind[] = [
  "definition",
  "references",
  "hover",
  "documentSymbols",
  "workspaceSymbols",
  "implementation",
  "typeDefinition",
];

const COMMANDS: Record<EditorQueryKind, string> = {
  definition: "vscode.executeDefinitionProvider",
  references: "vscode.executeReferenceProvider",
  hover: "vscode.executeHoverProvider",
  documentSymbols: "vscode.executeDocumentSymbolProvider",
  workspaceSymbols: "vscode.executeWorkspaceSymbolProvider",
  implementation: "vscode.executeImplementationProvider",
  typeDefinition: "vscode.executeTypeDefinitionProvider",
};

/** What a query runs on: a document (and a position in it), or a workspace symbol query. */
export interface QueryTarget { uri?: string; position?: Position; query?: string }

/** Runs one built-in command; the host turns the target into VS Code's Uri/Position (and loads the document). */
export interface QueryHost {
  execute(command: string, target: QueryTarget): Promise<unknown>;
}

/** Answers one query; a kind this client does not know, or a missing argument, is an error the server shows the model. */
export async function answerEditorQuery(params: EditorQueryParams, host: QueryHost): Promise<EditorQueryResult> {
  const command = COMMANDS[params.kind];
  if (!command) throw new Error(`unknown editor query kind: ${String(params.kind)}`);
  let target: QueryTarget;
  if (params.kind === "workspaceSymbols") {
    target = { query: params.query ?? "" };
  } else {
    if (!params.uri) throw new Error(`${params.kind} needs a uri`);
    target = { uri: params.uri };
    if (params.kind !== "documentSymbols") {
      if (!params.position) throw new Error(`${params.kind} needs a position`);
      target.position = params.position;
    }
  }
  const answer = await host.execute(command, target);
  return { items: toLspItems(params.kind, answer) };
}

/** VS Code's answer for `kind` → LSP JSON items (anything unrecognized is left out). */
export function toLspItems(kind: EditorQueryKind, answer: unknown): Record<string, unknown>[] {
  if (kind === "hover") {
    const hovers = list(answer).map(lspHover).filter(isDefined);
    return hovers.length ? [mergeHovers(hovers)] : [];
  }
  const convert = kind === "documentSymbols" || kind === "workspaceSymbols" ? lspSymbol : lspLocation;
  return list(answer).map(convert).filter(isDefined);
}

// -- the shapes ----------------------------------------------------------------------------------

type Obj = Record<string, unknown>;
const isObj = (x: unknown): x is Obj => typeof x === "object" && x !== null;
const isDefined = <T>(x: T | undefined): x is T => x !== undefined;
const list = (x: unknown): unknown[] => (Array.isArray(x) ? x : x === undefined || x === null ? [] : [x]);

function lspPosition(x: unknown): Position | undefined {
  if (!isObj(x) || typeof x.line !== "number" || typeof x.character !== "number") return undefined;
  return { line: x.line, character: x.character };
}

export function lspRange(x: unknown): Range | undefined {
  if (!isObj(x)) return undefined;
  const start = lspPosition(x.start);
  const end = lspPosition(x.end);
  return start && end ? { start, end } : undefined;
}

/** A vscode.Uri (its `toString()` is the encoded URI) or a string. */
function uriString(x: unknown): string | undefined {
  if (typeof x === "string") return x;
  if (isObj(x) && typeof x.scheme === "string" && typeof x.toString === "function") return x.toString();
  return undefined;
}

/** vscode.Location → Location; vscode.LocationLink → LocationLink. */
export function lspLocation(x: unknown): Obj | undefined {
  if (!isObj(x)) return undefined;
  if ("targetUri" in x) {
    const targetUri = uriString(x.targetUri);
    const targetRange = lspRange(x.targetRange);
    if (!targetUri || !targetRange) return undefined;
    const link: Obj = { targetUri, targetRange, targetSelectionRange: lspRange(x.targetSelectionRange) ?? targetRange };
    const origin = lspRange(x.originSelectionRange);
    if (origin) link.originSelectionRange = origin;
    return link;
  }
  const uri = uriString(x.uri);
  const range = lspRange(x.range);
  return uri && range ? { uri, range } : undefined;
}

/** One vscode.Hover → its markdown text and range. */
function lspHover(x: unknown): { value: string; range?: Range } | undefined {
  if (!isObj(x)) return undefined;
  const parts = list(x.contents)
    .map((c) => {
      if (typeof c === "string") return c;
      if (isObj(c) && typeof c.value === "string") return typeof c.language === "string" ? `\`\`\`${c.language}\n${c.value}\n\`\`\`` : c.value;
      return "";
    })
    .filter((t) => t.trim());
  if (!parts.length) return undefined;
  const range = lspRange(x.range);
  return range ? { value: parts.join("\n\n"), range } : { value: parts.join("\n\n") };
}

/** Several providers' hovers → one LSP Hover (MarkupContent, markdown). */
function mergeHovers(hovers: { value: string; range?: Range }[]): Obj {
  const hover: Obj = { contents: { kind: "markdown", value: hovers.map((h) => h.value).join("\n\n---\n\n") } };
  const range = hovers.find((h) => h.range)?.range;
  if (range) hover.range = range;
  return hover;
}

/** VS Code's SymbolKind counts from 0, LSP's from 1. */
const lspKind = (kind: unknown): number => (typeof kind === "number" ? kind + 1 : 13 /* Variable */);

/** vscode.DocumentSymbol → DocumentSymbol (with children); vscode.SymbolInformation → SymbolInformation. */
export function lspSymbol(x: unknown): Obj | undefined {
  if (!isObj(x) || typeof x.name !== "string") return undefined;
  const range = lspRange(x.range);
  const selectionRange = lspRange(x.selectionRange);
  if (range && selectionRange) {
    const symbol: Obj = { name: x.name, kind: lspKind(x.kind), range, selectionRange };
    if (typeof x.detail === "string" && x.detail) symbol.detail = x.detail;
    const children = list(x.children).map(lspSymbol).filter(isDefined);
    if (children.length) symbol.children = children;
    return symbol;
  }
  const location = lspLocation(x.location);
  if (!location || !("uri" in location)) return undefined;
  const info: Obj = { name: x.name, kind: lspKind(x.kind), location };
  if (typeof x.containerName === "string" && x.containerName) info.containerName = x.containerName;
  return info;
}
