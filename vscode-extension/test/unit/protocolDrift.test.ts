/**
 * The TypeScript side of the protocol against the server's: docs/protocol.schema.json is generated
 * from lsp_agent/lsp/protocol.py (`python -m lsp_agent.lsp.schema`), so a method, command, update
 * variant or field renamed on either side fails here.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import { ErrorCodes, Methods, PROTOCOL_VERSION, SESSION_UPDATE_KINDS, ServerCommands, WIRE_KEYS } from "../../src/shared/protocol";

const EXTENSION_ROOT = path.resolve(__dirname, "../../..");
// PROTOCOL_SCHEMA: check against another copy (e.g. a freshly generated one)
const SCHEMA_FILE = path.resolve(process.env.PROTOCOL_SCHEMA ?? path.join(EXTENSION_ROOT, "../docs/protocol.schema.json"));
const schema = JSON.parse(fs.readFileSync(SCHEMA_FILE, "utf8"));
const pkg = JSON.parse(fs.readFileSync(path.join(EXTENSION_ROOT, "package.json"), "utf8"));

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(p) : p.endsWith(".ts") ? [p] : [];
  });
}
const sources = sourceFiles(path.join(EXTENSION_ROOT, "src")).map((f) => ({ f, text: fs.readFileSync(f, "utf8") }));

describe("protocol drift: src/shared/protocol.ts vs docs/protocol.schema.json", () => {
  it("every method exists in the schema with the same direction and kind", () => {
    for (const spec of Object.values(Methods)) {
      const method = schema.methods[spec.name];
      assert.ok(method, `${spec.name} is not in the schema's methods`);
      assert.equal(method.direction, spec.direction, `${spec.name} direction`);
      assert.equal(method.kind, spec.kind, `${spec.name} kind`);
    }
  });

  it("every agent/* string in the extension's code is a method of the schema, named in protocol.ts", () => {
    const known = new Set<string>(Object.values(Methods).map((m) => m.name));
    for (const { f, text } of sources) {
      for (const [, name] of text.matchAll(/["'`](agent\/[A-Za-z/]+)["'`]/g)) {
        assert.ok(schema.methods[name], `${path.relative(EXTENSION_ROOT, f)} uses ${name}, which the schema does not have`);
        assert.ok(known.has(name), `${path.relative(EXTENSION_ROOT, f)} spells ${name} itself: use Methods from protocol.ts`);
      }
    }
  });

  it("the update variants are the schema's sessionUpdates", () => {
    assert.deepEqual([...SESSION_UPDATE_KINDS].sort(), [...schema.sessionUpdates].sort());
  });

  it("the server commands are the schema's commands", () => {
    assert.ok(
      schema.commands,
      `${path.relative(process.cwd(), SCHEMA_FILE)} has no "commands": regenerate it with \`python -m lsp_agent.lsp.schema > docs/protocol.schema.json\``,
    );
    assert.deepEqual(Object.values(ServerCommands).sort(), Object.keys(schema.commands).sort());
  });

  it("each interface has the keys of its schema definition", () => {
    for (const [tsName, [defName, keys]] of Object.entries(WIRE_KEYS)) {
      const def = schema.$defs[defName];
      assert.ok(def, `$defs.${defName} (for ${tsName}) is not in the schema`);
      assert.deepEqual([...keys].sort(), Object.keys(def.properties ?? {}).sort(), `${tsName} vs $defs.${defName}`);
    }
  });

  it("the protocol version and error codes match", () => {
    assert.equal(PROTOCOL_VERSION, schema.protocolVersion);
    for (const [name, code] of Object.entries(ErrorCodes)) assert.equal(schema.errorCodes[name], code, name);
  });
});

describe("palette commands", () => {
  const contributed: string[] = pkg.contributes.commands.map((c: { command: string }) => c.command);
  const server = new Set<string>([...Object.values(ServerCommands), ...Object.keys(schema.commands ?? {})]);

  it("never use an id of the server's executeCommand (vscode-languageclient registers those)", () => {
    for (const id of contributed) assert.ok(!server.has(id), `${id} collides with a server command`);
  });

  it("are exactly the ones the extension registers", async () => {
    const text = sources.find((s) => s.f.endsWith(path.join("features", "commands.ts")))!.text;
    const declared = new Map([...text.matchAll(/^\s+(\w+): "(lspAgent\.\w+)",$/gm)].map((m) => [m[1], m[2]]));
    assert.deepEqual([...declared.values()].sort(), [...contributed].sort());
    // each one is registered by exactly one feature module
    const features = sources.filter((s) => s.f.includes(`${path.sep}features${path.sep}`));
    for (const [key, id] of declared) {
      const owners = features.filter((s) => s.text.includes(`command(Commands.${key},`)).map((s) => path.basename(s.f));
      assert.equal(owners.length, 1, `${id} registered by ${owners.join(", ") || "no feature"}`);
    }
  });

  it("include Ask… as lspAgent.askPrompt", () => {
    const ask = pkg.contributes.commands.find((c: { command: string }) => c.command === "lspAgent.askPrompt");
    assert.equal(`${ask.category}: ${ask.title}`, "LSP Agent: Ask…");
  });
});
