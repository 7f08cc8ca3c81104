/** agent/editor/query: the kind → VS Code's provider command, and VS Code's answers → plain LSP JSON. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { answerEditorQuery, EDITOR_QUERY_KINDS, toLspItems, type QueryHost, type QueryTarget } from "../../src/editorQueries";
import type { EditorQueryKind } from "../../src/shared/protocol";

/** Stand-ins for VS Code's API objects: a Uri (scheme + an encoding toString) and ranges with extra members. */
class FakeUri {
  readonly scheme = "file";
  constructor(readonly path: string) {}
  toString(): string {
    return `file://${this.path.replace(/ /g, "%20")}`;
  }
}
const pos = (line: number, character: number) => ({ line, character, isBefore: () => false });
const range = (a: number, b: number, c: number, d: number) => ({ start: pos(a, b), end: pos(c, d), isEmpty: false });
const R = (a: number, b: number, c: number, d: number) => ({ start: { line: a, character: b }, end: { line: c, character: d } });

class RecordingHost implements QueryHost {
  readonly calls: { command: string; target: QueryTarget }[] = [];
  constructor(private readonly answer: unknown) {}
  async execute(command: string, target: QueryTarget): Promise<unknown> {
    this.calls.push({ command, target });
    return this.answer;
  }
}

describe("answerEditorQuery", () => {
  it("advertises every kind of the contract", () => {
    assert.deepEqual([...EDITOR_QUERY_KINDS].sort(), ["definition", "documentSymbols", "hover", "implementation", "references", "typeDefinition", "workspaceSymbols"]);
  });

  it("runs the kind's provider command with the document and the position", async () => {
    const expected: Record<EditorQueryKind, string> = {
      definition: "vscode.executeDefinitionProvider",
      references: "vscode.executeReferenceProvider",
      hover: "vscode.executeHoverProvider",
      implementation: "vscode.executeImplementationProvider",
      typeDefinition: "vscode.executeTypeDefinitionProvider",
      documentSymbols: "vscode.executeDocumentSymbolProvider",
      workspaceSymbols: "vscode.executeWorkspaceSymbolProvider",
    };
    for (const kind of EDITOR_QUERY_KINDS) {
      const host = new RecordingHost([]);
      const result = await answerEditorQuery({ sessionId: "s", kind, uri: "file:///w/a.ts", position: { line: 3, character: 7 }, query: "Foo" }, host);
      assert.deepEqual(result, { items: [] }, `${kind}: no answer is an empty list`);
      assert.equal(host.calls[0].command, expected[kind]);
      const target = kind === "workspaceSymbols" ? { query: "Foo" } : kind === "documentSymbols" ? { uri: "file:///w/a.ts" } : { uri: "file:///w/a.ts", position: { line: 3, character: 7 } };
      assert.deepEqual(host.calls[0].target, target, kind);
    }
  });

  it("a missing uri or position is an error (the server shows it to the model), never a guess", async () => {
    const host = new RecordingHost([]);
    await assert.rejects(answerEditorQuery({ sessionId: "s", kind: "definition", position: { line: 0, character: 0 } }, host), /needs a uri/);
    await assert.rejects(answerEditorQuery({ sessionId: "s", kind: "hover", uri: "file:///w/a.ts" }, host), /needs a position/);
    await assert.rejects(answerEditorQuery({ sessionId: "s", kind: "rename" as EditorQueryKind, uri: "file:///w/a.ts" }, host), /unknown editor query kind/);
    assert.equal(host.calls.length, 0);
  });
});

describe("toLspItems: VS Code's objects as LSP JSON", () => {
  it("Location and LocationLink keep their own shapes, with the encoded uri", () => {
    const answer = [
      { uri: new FakeUri("/w/my lib.ts"), range: range(4, 2, 4, 9) },
      { targetUri: new FakeUri("/w/b.ts"), targetRange: range(0, 0, 3, 1), targetSelectionRange: range(0, 9, 0, 12), originSelectionRange: range(7, 4, 7, 7) },
      { targetUri: new FakeUri("/w/c.ts"), targetRange: range(1, 0, 1, 5) },
      { nonsense: true },
    ];
    assert.deepEqual(toLspItems("definition", answer), [
      { uri: "file:///w/my%20lib.ts", range: R(4, 2, 4, 9) },
      { targetUri: "file:///w/b.ts", targetRange: R(0, 0, 3, 1), targetSelectionRange: R(0, 9, 0, 12), originSelectionRange: R(7, 4, 7, 7) },
      { targetUri: "file:///w/c.ts", targetRange: R(1, 0, 1, 5), targetSelectionRange: R(1, 0, 1, 5) },
    ]);
  });

  it("hovers of every provider become one markdown Hover; code in a fence", () => {
    const answer = [
      { contents: [{ value: "**greet**(name: string): string" }, { language: "typescript", value: "function greet(): void" }], range: range(2, 0, 2, 5) },
      { contents: ["plain text", ""] },
      { contents: [] },
    ];
    assert.deepEqual(toLspItems("hover", answer), [
      {
        contents: { kind: "markdown", value: "**greet**(name: string): string\n\n```typescript\nfunction greet(): void\n```\n\n---\n\nplain text" },
        range: R(2, 0, 2, 5),
      },
    ]);
    assert.deepEqual(toLspItems("hover", [{ contents: [] }]), []);
  });

  it("DocumentSymbol keeps its children; SymbolInformation its location; kinds count from 1 as in LSP", () => {
    const docSymbols = [
      {
        name: "Greeter",
        detail: "",
        kind: 4, // vscode.SymbolKind.Class
        range: range(0, 0, 9, 1),
        selectionRange: range(0, 13, 0, 20),
        children: [{ name: "greet", detail: "(name)", kind: 5, range: range(1, 2, 3, 3), selectionRange: range(1, 2, 1, 7), children: [] }],
        // VS Code's answer is also a SymbolInformation: the DocumentSymbol shape wins
        location: { uri: new FakeUri("/w/a.ts"), range: range(0, 0, 9, 1) },
      },
    ];
    assert.deepEqual(toLspItems("documentSymbols", docSymbols), [
      {
        name: "Greeter",
        kind: 5,
        range: R(0, 0, 9, 1),
        selectionRange: R(0, 13, 0, 20),
        children: [{ name: "greet", detail: "(name)", kind: 6, range: R(1, 2, 3, 3), selectionRange: R(1, 2, 1, 7) }],
      },
    ]);
    const infos = [{ name: "greet", kind: 11, containerName: "Greeter", location: { uri: new FakeUri("/w/a.ts"), range: range(1, 2, 3, 3) } }, { name: 3 }];
    assert.deepEqual(toLspItems("workspaceSymbols", infos), [{ name: "greet", kind: 12, containerName: "Greeter", location: { uri: "file:///w/a.ts", range: R(1, 2, 3, 3) } }]);
  });

  it("no answer (undefined) is no item", () => {
    for (const kind of EDITOR_QUERY_KINDS) assert.deepEqual(toLspItems(kind, undefined), []);
  });
});
