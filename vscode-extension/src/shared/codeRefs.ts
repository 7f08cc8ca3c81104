/**
 * Code references in the agent's answers: `src/a.py:12`, `src/a.py:12:5`, `/abs/b.ts:3`,
 * `a.py:12-20`. The prompt asks the model to cite code this way; the panel turns each into a
 * link that opens the file at that line. A path needs a file extension (or a folder part), so
 * `localhost:8080`, `12:30` and `step 1:2` stay text.
 */

export interface CodeRef {
  /** Offsets of the reference in the text searched: `text.slice(start, end)`. */
  start: number;
  end: number;
  /** As written: relative to a workspace folder, or absolute. */
  path: string;
  /** 1-based, as the model writes them. */
  line: number;
  column?: number;
}

const NAME = String.raw`[\w@+~-][\w.@+~-]*`;
const REF = new RegExp(
  String.raw`(?<![\w./:@~-])((?:\.{1,2}/|/)?(?:${NAME}/)*${NAME}\.[A-Za-z0-9]+|(?:\.{1,2}/|/)?(?:${NAME}/)+${NAME}):(\d+)(?::(\d+))?(?:-\d+)?(?![\w/])`,
  "g",
);

/** Every reference in `text`, in order. */
export function findCodeRefs(text: string): CodeRef[] {
  const found: CodeRef[] = [];
  for (const match of text.matchAll(REF)) {
    const line = Number(match[2]);
    if (!line) continue;
    const column = match[3] ? Number(match[3]) : undefined;
    const start = match.index ?? 0;
    found.push({ start, end: start + match[0].length, path: match[1], line, ...(column ? { column } : {}) });
  }
  return found;
}
