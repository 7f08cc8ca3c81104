/**
 * The review list (`agent/review/list`) turned into what the front-end shows: the panel's Changes
 * section (files → hunks with counts), the editor's CodeLenses and gutter marks, the hunks under
 * the cursor, and the edited proposals an Allow sends as `modifiedContent`. Pure functions, shared
 * by the extension host and the panel's page, so they are unit-tested without VS Code.
 */
import type { HunkStatus, Range, ReviewComment, ReviewFile, ReviewFileStatus, ReviewHunk, ReviewListResult } from "./protocol";

export interface Counts { pending: number; kept: number; undone: number }

/** The review list of one session, as the host last fetched it. */
export interface ReviewSnapshot {
  sessionId: string;
  files: ReviewFile[];
  /** Comments (and undo reasons) the next prompt carries (`agent/review/list` `unsentComments`). */
  unsentComments?: number;
}

export interface HunkRow {
  hunkId: string;
  status: HunkStatus;
  uri: string;
  range: Range | null;
  /** 1-based line shown next to the hunk (where it is now), or null when it is no longer found. */
  line: number | null;
  /** The hunk's first line: of what the agent wrote, or of what it deleted. */
  label: string;
  additions: number;
  deletions: number;
  /** The user's comments on it (`sent`: gone to the agent already). */
  comments: ReviewComment[];
}
export interface FileRow {
  uri: string;
  name: string;
  /** The folder part of the path, for telling apart files of the same name. */
  dir: string;
  status: ReviewFileStatus;
  counts: Counts;
  hunks: HunkRow[];
}
export interface ReviewModel { files: FileRow[]; counts: Counts }

const LABEL_MAX = 80;

/** Lines of a hunk text: each line keeps its `\n`; the last one may have none. */
export function lineCount(text: string): number {
  if (!text) return 0;
  const breaks = text.split("\n").length - 1;
  return text.endsWith("\n") ? breaks : breaks + 1;
}

function firstLine(text: string): string {
  const line = text.split("\n").find((l) => l.trim()) ?? "";
  const trimmed = line.trim();
  return trimmed.length > LABEL_MAX ? `${trimmed.slice(0, LABEL_MAX - 1)}…` : trimmed;
}

export function hunkLabel(h: Pick<ReviewHunk, "oldText" | "newText">): string {
  if (h.newText.trim()) return firstLine(h.newText);
  if (h.oldText.trim()) return firstLine(h.oldText);
  return h.newText || h.oldText ? "(blank lines)" : "(empty)";
}

export function countHunks(hunks: readonly { status: HunkStatus }[]): Counts {
  const counts: Counts = { pending: 0, kept: 0, undone: 0 };
  for (const h of hunks) counts[h.status]++;
  return counts;
}

/** "2 pending · 1 kept · 0 undone" */
export function countsLine(c: Counts): string {
  return `${c.pending} pending · ${c.kept} kept · ${c.undone} undone`;
}

function splitPath(uri: string): { name: string; dir: string } {
  let path = uri;
  try {
    path = decodeURIComponent(new URL(uri).pathname);
  } catch {
    // not a URL: show it as it is
  }
  const cut = path.lastIndexOf("/");
  return cut < 0 ? { name: path, dir: "" } : { name: path.slice(cut + 1), dir: path.slice(0, cut) };
}

/** The Changes section: files in the server's order, hunks in file order, with counts. */
export function reviewModel(list: Pick<ReviewListResult, "files">): ReviewModel {
  const files = list.files.map((f): FileRow => {
    const hunks = f.hunks.map((h): HunkRow => ({
      hunkId: h.hunkId,
      status: h.status,
      uri: f.uri,
      range: h.range,
      line: h.range ? h.range.start.line + 1 : null,
      label: hunkLabel(h),
      additions: lineCount(h.newText),
      deletions: lineCount(h.oldText),
      comments: h.comments ?? [],
    }));
    return { uri: f.uri, ...splitPath(f.uri), status: f.status, counts: countHunks(f.hunks), hunks };
  });
  return { files, counts: countHunks(list.files.flatMap((f) => f.hunks)) };
}

// -- the editor ----------------------------------------------------------------------------------

/** A pending hunk the editor can show: it has a place in the current text. */
export interface PendingMark {
  hunkId: string;
  /** The CodeLens goes above this line (0-based). */
  line: number;
  /** The lines the hunk's new text covers, end exclusive; equal for a pure deletion. */
  startLine: number;
  endLine: number;
  kind: "added" | "modified" | "deleted";
}

/** The file's pending hunks with a range, in file order: the CodeLenses and the gutter marks. */
export function pendingMarks(file: ReviewFile | undefined): PendingMark[] {
  if (!file) return [];
  return file.hunks
    .filter((h): h is ReviewHunk & { range: Range } => h.status === "pending" && h.range !== null)
    .map((h): PendingMark => ({
      hunkId: h.hunkId,
      line: h.range.start.line,
      startLine: h.range.start.line,
      endLine: Math.max(h.range.end.line, h.range.start.line),
      kind: !h.newText ? "deleted" : !h.oldText ? "added" : "modified",
    }))
    .sort((a, b) => a.line - b.line);
}

/**
 * The pending hunks a line selection touches (0-based, both ends included): a hunk whose lines
 * overlap it, or a deletion at one of its lines or just below its last one.
 */
export function hunksAtLines(file: ReviewFile | undefined, fromLine: number, toLine: number): string[] {
  return pendingMarks(file)
    .filter((m) => (m.endLine > m.startLine ? m.startLine <= toLine && m.endLine > fromLine : m.startLine >= fromLine && m.startLine <= toLine + 1))
    .map((m) => m.hunkId);
}

// -- editable proposals --------------------------------------------------------------------------

/**
 * The `modifiedContent` of an Allow: for each file of the ask, the proposal's text as the user left
 * it, when they changed it (`edited` gives undefined for a proposal they never touched).
 */
export function modifiedContent(
  fileUris: readonly string[],
  edited: (uri: string) => string | undefined,
  proposed: (uri: string) => string | undefined,
): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const uri of fileUris) {
    const text = edited(uri);
    const original = proposed(uri);
    if (text !== undefined && original !== undefined && text !== original) out[uri] = text;
  }
  return Object.keys(out).length ? out : undefined;
}
