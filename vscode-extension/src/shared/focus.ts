/**
 * The user's focus sent with each prompt (the active file, the cursor, the selection and its text)
 * and the chip that shows it in the panel's input area ("a.py:12-18"). Pure: the host reads the
 * editor into an `EditorFocus`, this decides what goes on the wire and what the chip says.
 */
import { MAX_SELECTED_TEXT, type Position, type PromptContext, type Range } from "./protocol";

/** The active file editor as the host sees it (positions 0-based, as LSP). */
export interface EditorFocus {
  uri: string;
  /** The path relative to the workspace folder (the chip's tooltip). */
  path: string;
  cursor: Position;
  /** Absent or empty: no selection. */
  selection?: Range;
  selectedText?: string;
}

/** What the panel shows: the chip's text and tooltip. */
export interface FocusChip { label: string; title: string }

const isEmpty = (r: Range | undefined): boolean => !r || (r.start.line === r.end.line && r.start.character === r.end.character);

/** The 1-based lines a selection covers; one that ends at column 0 leaves that last line out. */
export function selectedLines(r: Range): [number, number] {
  const last = r.end.line > r.start.line && r.end.character === 0 ? r.end.line - 1 : r.end.line;
  return [r.start.line + 1, last + 1];
}

/** "a.py:12-18", "a.py:12" (one line selected) or "a.py" (no selection). */
export function focusChip(f: EditorFocus): FocusChip {
  const name = f.path.split("/").pop() || f.path;
  if (isEmpty(f.selection)) return { label: name, title: `${f.path} (line ${f.cursor.line + 1}): sent with the prompt` };
  const [from, to] = selectedLines(f.selection!);
  const lines = from === to ? `${from}` : `${from}-${to}`;
  return { label: `${name}:${lines}`, title: `${f.path}:${lines}: the selection is sent with the prompt` };
}

/**
 * The prompt's `context`. `send`: the user's setting and the chip (removed = false);
 * `selection`: a `#selection` mention asks for the selection even when focus is off.
 */
export function focusContext(f: EditorFocus | undefined, opts: { send: boolean; selection?: boolean }): PromptContext | undefined {
  if (!f || (!opts.send && !opts.selection)) return undefined;
  const context: PromptContext = { activeDocument: { uri: f.uri } };
  if (opts.send) context.cursor = f.cursor;
  if (!isEmpty(f.selection)) {
    context.selection = f.selection;
    if (f.selectedText) context.selectedText = f.selectedText.slice(0, MAX_SELECTED_TEXT);
  }
  return context;
}
