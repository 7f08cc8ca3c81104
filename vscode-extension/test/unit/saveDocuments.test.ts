/** agent/documents/save: a document is saved only at the version the agent's edit produced. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { saveDocuments, type SavableDocument, type SaveHost } from "../../src/saveDocuments";

class FakeDocument implements SavableDocument {
  saves = 0;
  constructor(
    public version: number,
    public isDirty = true,
    private readonly answer: () => boolean = () => true,
  ) {}
  async save(): Promise<boolean> {
    this.saves++;
    const saved = this.answer();
    if (saved) this.isDirty = false;
    return saved;
  }
}

const host = (documents: Record<string, FakeDocument>): SaveHost => ({ find: (uri) => documents[uri] });
const A = "file:///w/a.py";

describe("agent/documents/save", () => {
  it("saves a dirty document at the edit's version and answers its version", async () => {
    const a = new FakeDocument(2);
    const result = await saveDocuments({ documents: [{ uri: A, version: 2 }] }, host({ [A]: a }));
    assert.deepEqual(result, { documents: [{ uri: A, saved: true, version: 2 }] });
    assert.equal(a.saves, 1);
  });

  it("never saves a document that changed after the edit (the user typed since)", async () => {
    const a = new FakeDocument(3);
    const result = await saveDocuments({ documents: [{ uri: A, version: 2 }] }, host({ [A]: a }));
    assert.equal(result.documents[0].saved, false);
    assert.match(result.documents[0].reason ?? "", /changed after the edit \(version 3, the edit made 2\)/);
    assert.equal(a.saves, 0);
  });

  it("a clean document at the version is saved already; a closed one is not saved", async () => {
    const a = new FakeDocument(2, false);
    const result = await saveDocuments({ documents: [{ uri: A, version: 2 }, { uri: "file:///w/b.py", version: 1 }] }, host({ [A]: a }));
    assert.deepEqual(result.documents, [
      { uri: A, saved: true, version: 2 },
      { uri: "file:///w/b.py", saved: false, reason: "the document is not open" },
    ]);
    assert.equal(a.saves, 0);
  });

  it("a save VS Code refuses or that throws is reported with its reason", async () => {
    const refused = await saveDocuments({ documents: [{ uri: A, version: 2 }] }, host({ [A]: new FakeDocument(2, true, () => false) }));
    assert.deepEqual(refused.documents, [{ uri: A, saved: false, reason: "VS Code did not save it" }]);
    const thrown = await saveDocuments(
      { documents: [{ uri: A, version: 2 }] },
      host({
        [A]: new FakeDocument(2, true, () => {
          throw new Error("EACCES: permission denied");
        }),
      }),
    );
    assert.deepEqual(thrown.documents, [{ uri: A, saved: false, reason: "EACCES: permission denied" }]);
  });
});
