/**
 * Mentions in the panel's input: `@a.py` / `@Symbol` (a file or a symbol: a `resource_link`) and
 * `#diagnostics`, `#selection`, `#buffers`, `#diff` (a `mention` block the server expands). Pure:
 * the webview finds the word being typed and shows the host's completions; on send the text keeps
 * the mentions as written and the blocks follow it (docs/protocol.md "Mentions").
 */
import { MENTION_NAMES, type ContentBlock, type MentionName } from "./protocol";

export type Trigger = "@" | "#";

/** The `@…` / `#…` word that ends at the caret, if any. */
export interface MentionQuery { trigger: Trigger; query: string; start: number; end: number }

/** A completion the host offers; `insert` replaces the typed word (trigger included). */
export interface MentionItem { label: string; detail?: string; insert: string; block: ContentBlock }

/** A completion the user picked, remembered until the prompt is sent. */
export interface PickedMention { text: string; block: ContentBlock }

/** The mention word before `caret`: a trigger at the start of the text or after a space. */
export function mentionAt(text: string, caret: number): MentionQuery | undefined {
  let start = caret;
  while (start > 0 && !/\s/.test(text[start - 1])) start--;
  const trigger = text[start];
  if (trigger !== "@" && trigger !== "#") return undefined;
  return { trigger, query: text.slice(start + 1, caret), start, end: caret };
}

/** The text with the word replaced by the picked completion (and a space); the new caret. */
export function applyCompletion(text: string, q: MentionQuery, insert: string): { text: string; caret: number } {
  const after = text.slice(q.end);
  const spaced = after.startsWith(" ") ? insert : `${insert} `;
  return { text: text.slice(0, q.start) + spaced + after, caret: q.start + insert.length + 1 };
}

/**
 * How well `query` matches `candidate` as a subsequence (case-insensitive), higher is better;
 * undefined: no match. Matches in the file name, at word starts and in a row count more.
 */
export function fuzzyScore(query: string, candidate: string): number | undefined {
  if (!query) return 0;
  const q = query.toLowerCase();
  const c = candidate.toLowerCase();
  const nameStart = c.lastIndexOf("/") + 1;
  let score = 0;
  let from = 0;
  let previous = -2;
  for (const ch of q) {
    const at = c.indexOf(ch, from);
    if (at < 0) return undefined;
    score += 1;
    if (at === previous + 1) score += 3;
    if (at >= nameStart) score += 2;
    if (at === 0 || /[/._\-\s]/.test(c[at - 1]) || /[a-z][A-Z]/.test(candidate.slice(at - 1, at + 1))) score += 2;
    previous = at;
    from = at + 1;
  }
  if (c.slice(nameStart).startsWith(q)) score += 10;
  return score - candidate.length / 100;
}

/** The best `limit` of `paths` for `query`, best first (shorter paths win ties). */
export function rankPaths(query: string, paths: readonly string[], limit = 20): string[] {
  return paths
    .map((p) => ({ p, s: fuzzyScore(query, p) }))
    .filter((x): x is { p: string; s: number } => x.s !== undefined)
    .sort((a, b) => b.s - a.s || a.p.length - b.p.length || a.p.localeCompare(b.p))
    .slice(0, limit)
    .map((x) => x.p);
}

const HASH_DETAIL: Record<MentionName, string> = {
  diagnostics: "the current errors and warnings",
  selection: "the editor's selection",
  buffers: "the open files",
  diff: "the working tree's git diff",
};

/** `#` completions: the names the server expands that match `query`. */
export function hashItems(query: string, available: readonly string[] = MENTION_NAMES): MentionItem[] {
  return MENTION_NAMES.filter((n) => available.includes(n) && fuzzyScore(query, n) !== undefined).map((name) => ({
    label: `#${name}`,
    detail: HASH_DETAIL[name],
    insert: `#${name}`,
    block: { type: "mention", name },
  }));
}

/** Trailing punctuation a sentence puts after a mention ("see @a.py, then…"). */
const TRAILING = /[.,;:!?)\]}'"]+$/;

/**
 * The blocks for the mentions in `text`: the ones the user picked (still in the text), `#name`
 * typed by hand, and `@path` typed by hand that `resolveFile` knows. Each block once.
 */
export function mentionBlocks(
  text: string,
  picked: readonly PickedMention[],
  resolveFile: (path: string) => string | undefined,
  available: readonly string[] = MENTION_NAMES,
): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  const seen = new Set<string>();
  const add = (b: ContentBlock) => {
    const key = JSON.stringify(b);
    if (!seen.has(key)) {
      seen.add(key);
      blocks.push(b);
    }
  };
  for (const m of text.matchAll(/(^|\s)([@#])(\S+)/g)) {
    const word = m[2] + m[3];
    const pick = picked.find((p) => p.text === word) ?? picked.find((p) => p.text === word.replace(TRAILING, ""));
    if (pick) {
      add(pick.block);
      continue;
    }
    const name = m[3].replace(TRAILING, "");
    if (m[2] === "#") {
      if ((MENTION_NAMES as readonly string[]).includes(name) && available.includes(name)) add({ type: "mention", name: name as MentionName });
    } else {
      const uri = name ? resolveFile(name) : undefined;
      if (uri) add({ type: "resource_link", uri });
    }
  }
  return blocks;
}

/** Whether the prompt asks for the selection (`#selection`): then it is sent even with focus off. */
export function wantsSelection(blocks: readonly ContentBlock[]): boolean {
  return blocks.some((b) => b.type === "mention" && b.name === "selection");
}
