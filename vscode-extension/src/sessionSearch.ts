/**
 * The search box behind "LSP Agent: Search Sessions": runs `agent/session/search` as the user
 * types (after a pause, only the latest query's answer is shown) and turns hits into quick-pick
 * items. It knows nothing of VS Code, so it is unit-tested with a fake search.
 */
import type { SearchHitKind, SessionSearchHit } from "./shared/protocol";

export interface SearchItem {
  label: string;
  description: string;
  detail: string;
  /** The quick pick filters items by its own matching; the server already chose these. */
  alwaysShow: true;
  sessionId: string;
  messageId: string;
}

const KIND_LABELS: Record<SearchHitKind, string> = {
  user: "you said",
  assistant: "the agent said",
  reasoning: "the agent thought",
  tool_input: "a tool was given",
  tool_output: "a tool printed",
};

/**
 * One hit as a quick-pick row: the snippet first (the label is where the quick pick highlights the
 * words typed, so they light up in the matching text, not in the title), then what matched and
 * when that message was written, then the session's title.
 */
export function searchItem(hit: SessionSearchHit): SearchItem {
  const written = hit.time ?? hit.updatedAt;
  const when = new Date(written);
  return {
    label: hit.snippet.replace(/\s+/g, " ").trim(),
    description: `${KIND_LABELS[hit.kind] ?? hit.kind} · ${Number.isNaN(when.getTime()) ? written : when.toLocaleString()}`,
    detail: hit.title || "(untitled)",
    alwaysShow: true,
    sessionId: hit.sessionId,
    messageId: hit.messageId,
  };
}

export interface LiveSearchView {
  busy(on: boolean): void;
  show(items: SearchItem[], query: string): void;
  fail(message: string, query: string): void;
}

/** Searches `delayMs` after the last keystroke; an answer to an older query is dropped. */
export class LiveSearch {
  private timer?: ReturnType<typeof setTimeout>;
  private latest = 0;

  constructor(
    private readonly search: (query: string) => Promise<SessionSearchHit[]>,
    private readonly view: LiveSearchView,
    private readonly delayMs = 200,
  ) {}

  update(query: string): void {
    if (this.timer) clearTimeout(this.timer);
    const ticket = ++this.latest;
    if (!query.trim()) {
      this.view.busy(false);
      this.view.show([], query);
      return;
    }
    this.timer = setTimeout(() => void this.run(query, ticket), this.delayMs);
  }

  private async run(query: string, ticket: number): Promise<void> {
    this.view.busy(true);
    try {
      const hits = await this.search(query);
      if (ticket === this.latest) this.view.show(hits.map(searchItem), query);
    } catch (error) {
      if (ticket === this.latest) this.view.fail(error instanceof Error ? error.message : String(error), query);
    } finally {
      if (ticket === this.latest) this.view.busy(false);
    }
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.latest++;
  }
}
