/**
 * Next-edit suggestions (issue 36): when to ask the server (its next-edit request), which answer is
 * shown, and what Tab and Escape do. It knows nothing of VS Code (the editor is a `NextEditHost`),
 * and the decisions are unit-tested: an answer for an older version of the document is dropped
 * unseen; a shown suggestion is reported once — accepted when Tab applies it, rejected when the
 * user presses Escape, types, or leaves the file; Tab first jumps to it and a second Tab accepts.
 */
import type { NextEditResult, Position, Range } from "./shared/protocol";

/** The pause after the last edit before asking (the team's agreed ~600 ms). */
export const NEXT_EDIT_DEBOUNCE_MS = 600;

/** Turns cancelled when the answer is no longer wanted (a newer edit, a newer question, dispose). */
export class CancelToken {
  private done = false;
  private readonly listeners: (() => void)[] = [];

  get cancelled(): boolean {
    return this.done;
  }

  onCancelled(f: () => void): void {
    if (this.done) f();
    else this.listeners.push(f);
  }

  cancel(): void {
    if (this.done) return;
    this.done = true;
    for (const f of this.listeners.splice(0)) f();
  }
}

/** What the controller needs of the editor and the server. */
export interface NextEditHost {
  /** The active editor's document and cursor; undefined when no (file) editor is active. */
  cursor(): { uri: string; version: number; position: Position } | undefined;
  /** The open document's current version; undefined when it is not open. */
  version(uri: string): number | undefined;
  /** The next-edit request; `token` turns true once the answer is no longer wanted. */
  request(params: { textDocument: { uri: string; version: number }; position: Position }, token: CancelToken): Promise<NextEditResult | null>;
  /** The feedback notification. */
  feedback(id: string, accepted: boolean): void;
  show(suggestion: NextEditResult): void;
  hide(): void;
  /** Moves the cursor to the suggestion and reveals it. */
  reveal(suggestion: NextEditResult): void;
  /** Replaces the range with the new text if the document is still at `version`; whether it did. */
  apply(suggestion: NextEditResult, version: number): Promise<boolean>;
  setTimer(f: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
}

/** What Tab did: nothing shown (the key goes on to the editor), a jump, or an accept. */
export type TabOutcome = "none" | "jumped" | "accepted" | "dropped";

interface Shown {
  suggestion: NextEditResult;
  version: number;
}

export class NextEditController {
  private shown?: Shown;
  private timer?: unknown;
  private pending?: CancelToken;
  /** Our own accept is changing the document: that change is no rejection. */
  private applying = false;

  constructor(
    private readonly host: NextEditHost,
    private readonly enabled: () => boolean,
    private readonly debounceMs = NEXT_EDIT_DEBOUNCE_MS,
  ) {}

  /** The suggestion on screen, if any. */
  get visible(): NextEditResult | undefined {
    return this.shown?.suggestion;
  }

  /**
   * A document changed (the user's typing or an agent's edit). A suggestion shown in it is
   * rejected (the user went on without it); a question in flight is dropped; a new one is asked
   * once the edits pause.
   */
  edited(uri: string): void {
    if (this.applying) return;
    if (this.shown && this.shown.suggestion.uri === uri) this.reject();
    this.cancelPending();
    if (!this.enabled()) return;
    const cursor = this.host.cursor();
    if (!cursor || cursor.uri !== uri) return;
    this.timer = this.host.setTimer(() => {
      this.timer = undefined;
      void this.ask();
    }, this.debounceMs);
  }

  /** An agent's edit landed: ask at once (no typing to wait for), unless a suggestion is shown. */
  agentEdited(): void {
    if (this.shown || !this.enabled()) return;
    this.cancelPending();
    void this.ask();
  }

  /** The active editor changed: a suggestion for another file is rejected (the user left it). */
  activeChanged(uri: string | undefined): void {
    if (this.shown && this.shown.suggestion.uri !== uri) this.reject();
  }

  /** Asks for the active document now; the answer is shown only if the document is unchanged since. */
  async ask(): Promise<void> {
    const cursor = this.host.cursor();
    if (!cursor || !this.enabled()) return;
    this.cancelPending();
    const token = new CancelToken();
    this.pending = token;
    let result: NextEditResult | null;
    try {
      result = await this.host.request({ textDocument: { uri: cursor.uri, version: cursor.version }, position: cursor.position }, token);
    } catch {
      result = null; // a failed or cancelled request shows nothing
    }
    if (this.pending === token) this.pending = undefined;
    if (token.cancelled || !result) return;
    // stale: the document changed since the question (its range would point at other text)
    if (result.uri !== cursor.uri || this.host.version(cursor.uri) !== cursor.version) return;
    if (this.shown) this.reject();
    this.shown = { suggestion: result, version: cursor.version };
    this.host.show(result);
  }

  /** Tab: jump to the suggestion when the cursor is elsewhere, accept it when the cursor is on it. */
  async tab(): Promise<TabOutcome> {
    const shown = this.shown;
    if (!shown) return "none";
    const { suggestion, version } = shown;
    if (this.host.version(suggestion.uri) !== version) {
      this.clear();
      return "dropped";
    }
    const cursor = this.host.cursor();
    if (!cursor || cursor.uri !== suggestion.uri || !contains(suggestion.range, cursor.position)) {
      this.host.reveal(suggestion);
      return "jumped";
    }
    this.applying = true;
    let applied: boolean;
    try {
      applied = await this.host.apply(suggestion, version);
    } finally {
      this.applying = false;
    }
    if (this.shown === shown) this.clear();
    if (!applied) return "dropped";
    this.host.feedback(suggestion.id, true);
    // an accepted edit is an edit: the next one may follow from it
    this.edited(suggestion.uri);
    return "accepted";
  }

  /** Escape: the suggestion is rejected. */
  escape(): void {
    if (this.shown) this.reject();
  }

  dispose(): void {
    this.cancelPending();
    this.clear();
  }

  private reject(): void {
    const shown = this.shown;
    if (!shown) return;
    this.clear();
    this.host.feedback(shown.suggestion.id, false);
  }

  private clear(): void {
    if (!this.shown) return;
    this.shown = undefined;
    this.host.hide();
  }

  private cancelPending(): void {
    if (this.timer !== undefined) this.host.clearTimer(this.timer);
    this.timer = undefined;
    this.pending?.cancel();
    this.pending = undefined;
  }
}

/** Whether `p` lies in `range` (its ends included: the cursor right before or after the text counts). */
export function contains(range: Range, p: Position): boolean {
  const before = (a: Position, b: Position) => a.line < b.line || (a.line === b.line && a.character < b.character);
  return !before(p, range.start) && !before(range.end, p);
}

/** The id an inline completion's command carries (`arguments: [id]` or `[{id}]`); undefined otherwise. */
export function acceptedId(args: unknown[]): string | undefined {
  const first = args[0];
  if (typeof first === "string" && first) return first;
  if (first && typeof first === "object" && typeof (first as { id?: unknown }).id === "string") return (first as { id: string }).id;
  return undefined;
}

/** How much of the new text is shown (an `after` decoration is one line). */
export const MAX_SHOWN = 120;

/** The new text as shown beside the old: one line (breaks as ⏎), a long one cut with …, a deletion as ⌫. */
export function shownText(newText: string): string {
  const flat = newText.replace(/\r?\n/g, "⏎");
  if (!flat) return "⌫";
  return flat.length > MAX_SHOWN ? `${flat.slice(0, MAX_SHOWN - 1)}…` : flat;
}
