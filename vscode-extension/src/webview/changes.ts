/** The Changes section: the session's review list, files → hunks, with Keep/Undo at each level. */
import type { ReviewAction } from "../shared/protocol";
import { countsLine, reviewModel, type Counts, type FileRow, type HunkRow, type ReviewSnapshot } from "../shared/review";
import { h } from "./dom";
import type { Part, Ui } from "./ui";

type Resolve = (action: ReviewAction, selection?: { hunkIds?: string[]; uris?: string[]; reason?: string }) => void;

export function createChanges(ui: Ui): Part {
  const el = h("section", { class: "changes", "data-testid": "changes", hidden: true });
  let shown: ReviewSnapshot | undefined;
  let collapsed = false;
  const collapsedFiles = new Set<string>();
  /** The hunks whose comment box is open (kept across redraws). */
  const commenting = new Set<string>();
  /** What was typed in each open box, so a redraw (the list changed meanwhile) keeps it. */
  const drafts = new Map<string, string>();

  const draw = (force: boolean) => {
    const state = ui.state();
    const review = state.review && state.review.sessionId === state.session?.sessionId ? state.review : undefined;
    if (review === shown && !force) return;
    shown = review;
    el.hidden = !review?.files.length;
    if (!review?.files.length) {
      el.replaceChildren();
      return;
    }
    const model = reviewModel(review);
    const resolve: Resolve = (action, selection = {}) => ui.post({ type: "resolve", action, ...selection });
    const pending = model.counts.pending > 0;
    const unsent = review.unsentComments ?? 0;
    const head = h(
      "div",
      { class: "changes-head" },
      h("button", { class: "link twisty", "data-testid": "changes-toggle", "aria-expanded": collapsed ? "false" : "true", title: collapsed ? "Show the changes" : "Hide the changes", onclick: () => { collapsed = !collapsed; draw(true); } }, collapsed ? "▸" : "▾"),
      h("span", { class: "changes-title" }, "Changes"),
      countsSpan("changes-counts", model.counts),
      h("span", { class: "spacer" }),
      unsent
        ? h("button", { "data-testid": "changes-send-comments", title: "Send your comments to the agent now, as a prompt of their own (else they open your next prompt)", onclick: () => ui.post({ type: "sendComments" }) }, `Send comments (${unsent})`)
        : undefined,
      h("button", { "data-testid": "changes-keep-all", disabled: !pending, title: "Keep every pending change", onclick: () => resolve("keep") }, "Keep all"),
      h("button", { "data-testid": "changes-undo-all", disabled: !pending, title: "Undo every pending change", onclick: () => resolve("undo") }, "Undo all"),
    );
    const toggleFile = (uri: string) => {
      if (collapsedFiles.has(uri)) collapsedFiles.delete(uri);
      else collapsedFiles.add(uri);
      draw(true);
    };
    const toggleComment = (hunkId: string) => {
      if (commenting.has(hunkId)) {
        commenting.delete(hunkId);
        drafts.delete(hunkId);
      } else commenting.add(hunkId);
      draw(true);
    };
    const hunks: HunkParts = { resolve, commenting, drafts, toggleComment };
    el.replaceChildren(head, ...(collapsed ? [] : [h("div", { class: "changes-list" }, ...model.files.map((f) => fileRow(ui, f, hunks, collapsedFiles.has(f.uri), toggleFile)))]));
  };
  return { el, render: () => draw(false) };
}

function countsSpan(testid: string, c: Counts): HTMLElement {
  return h("span", { class: "counts", "data-testid": testid, "data-pending": String(c.pending), "data-kept": String(c.kept), "data-undone": String(c.undone) }, countsLine(c));
}

/** What a hunk row needs besides its data: resolving, and its comment box. */
interface HunkParts { resolve: Resolve; commenting: Set<string>; drafts: Map<string, string>; toggleComment: (hunkId: string) => void }

function fileRow(ui: Ui, f: FileRow, parts: HunkParts, collapsed: boolean, toggle: (uri: string) => void): HTMLElement {
  const { resolve } = parts;
  const pending = f.counts.pending > 0;
  return h(
    "div",
    { class: "change-file", "data-testid": "change-file", "data-uri": f.uri, "data-status": f.status },
    h(
      "div",
      { class: "row change-file-head" },
      h("button", { class: "link twisty", "aria-expanded": collapsed ? "false" : "true", "aria-label": `${collapsed ? "Show" : "Hide"} the changes in ${f.name}`, onclick: () => toggle(f.uri) }, collapsed ? "▸" : "▾"),
      h("a", { href: "#", class: "file-name", title: f.dir ? `${f.dir}/${f.name}` : f.name, "data-testid": "change-file-open", onclick: (e) => { e.preventDefault(); ui.post({ type: "openLocation", uri: f.uri }); } }, f.name),
      f.dir ? h("span", { class: "dir" }, f.dir.split("/").slice(-2).join("/")) : undefined,
      countsSpan("change-file-counts", f.counts),
      h("span", { class: "spacer" }),
      pending ? h("button", { "data-testid": "change-file-keep", title: "Keep this file's pending changes", onclick: () => resolve("keep", { uris: [f.uri] }) }, "Keep file") : undefined,
      pending ? h("button", { "data-testid": "change-file-undo", title: "Undo this file's pending changes", onclick: () => resolve("undo", { uris: [f.uri] }) }, "Undo file") : undefined,
    ),
    ...(collapsed ? [] : f.hunks.flatMap((hk) => hunkRows(ui, hk, parts))),
  );
}

/** The hunk's row, its comments, and its comment box when open. */
function hunkRows(ui: Ui, hk: HunkRow, parts: HunkParts): HTMLElement[] {
  const open = parts.commenting.has(hk.hunkId);
  const rows = [hunkRow(ui, hk, parts.resolve, open, () => parts.toggleComment(hk.hunkId))];
  for (const c of hk.comments) {
    const label = c.action === "undo" ? "Undone, because: " : c.action === "keep" ? "Kept, because: " : "";
    rows.push(
      h(
        "div",
        { class: "row change-comment", "data-testid": "change-comment", "data-sent": String(c.sent) },
        h("span", { class: "comment-text" }, `${label}${c.text}`),
        h("span", { class: "dir" }, c.sent ? "sent" : "with your next prompt"),
      ),
    );
  }
  if (open) rows.push(commentBox(ui, hk, parts));
  return rows;
}

/** A text box for a comment on the hunk: Comment, or (pending) Undo with the text as the reason. */
function commentBox(ui: Ui, hk: HunkRow, parts: HunkParts): HTMLElement {
  const input = h("textarea", { class: "comment-input", "data-testid": "change-comment-input", rows: "2", placeholder: "A comment for the agent (sent with your next prompt)", "aria-label": `Comment on the change at line ${hk.line ?? "?"}` }) as HTMLTextAreaElement;
  input.value = parts.drafts.get(hk.hunkId) ?? "";
  input.addEventListener("input", () => parts.drafts.set(hk.hunkId, input.value));
  const done = () => parts.toggleComment(hk.hunkId);
  const add = () => {
    const text = input.value.trim();
    if (!text) return;
    ui.post({ type: "comment", hunkId: hk.hunkId, text });
    done();
  };
  const undo = () => {
    const reason = input.value.trim();
    parts.resolve("undo", reason ? { hunkIds: [hk.hunkId], reason } : { hunkIds: [hk.hunkId] });
    done();
  };
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      add();
    } else if (e.key === "Escape") done();
  });
  setTimeout(() => input.focus(), 0);
  return h(
    "div",
    { class: "row change-comment-box", "data-testid": "change-comment-box" },
    input,
    h("button", { "data-testid": "change-comment-add", title: "Add the comment (Ctrl+Enter)", onclick: add }, "Comment"),
    hk.status === "pending" ? h("button", { "data-testid": "change-comment-undo", title: "Undo this change, with the text as the reason", onclick: undo }, "Undo with reason") : undefined,
    h("button", { class: "link", "data-testid": "change-comment-cancel", title: "Close (Escape)", onclick: done }, "Cancel"),
  );
}

function hunkRow(ui: Ui, hk: HunkRow, resolve: Resolve, commentOpen: boolean, toggleComment: () => void): HTMLElement {
  return h(
    "div",
    { class: `row change-hunk status-${hk.status}`, "data-testid": "change-hunk", "data-hunk-id": hk.hunkId, "data-status": hk.status },
    h(
      "a",
      { href: "#", class: "hunk-label", "data-testid": "change-hunk-open", title: hk.line ? `line ${hk.line}` : "no longer found in the file", onclick: (e) => { e.preventDefault(); ui.post({ type: "openLocation", uri: hk.uri, range: hk.range ?? undefined }); } },
      h("span", { class: "line" }, hk.line ? `${hk.line}` : "?"),
      ` ${hk.label}`,
    ),
    h("span", { class: "add" }, `+${hk.additions}`),
    h("span", { class: "del" }, `−${hk.deletions}`),
    hk.status === "pending"
      ? h("button", { "data-testid": "change-hunk-keep", title: "Keep this change", "aria-label": `Keep the change at line ${hk.line ?? "?"}`, onclick: () => resolve("keep", { hunkIds: [hk.hunkId] }) }, "Keep")
      : h("span", { class: `badge ${hk.status}`, "data-testid": "change-hunk-status" }, hk.status),
    hk.status === "pending" ? h("button", { "data-testid": "change-hunk-undo", title: "Undo this change", "aria-label": `Undo the change at line ${hk.line ?? "?"}`, onclick: () => resolve("undo", { hunkIds: [hk.hunkId] }) }, "Undo") : undefined,
    h("button", { class: "link", "data-testid": "change-hunk-comment", "aria-expanded": commentOpen ? "true" : "false", title: "Comment on this change (or undo it with a reason)", "aria-label": `Comment on the change at line ${hk.line ?? "?"}`, onclick: toggleComment }, "Comment…"),
  );
}
