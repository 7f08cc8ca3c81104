/** The Changes section: the session's review list, files → hunks, with Keep/Undo at each level. */
import type { ReviewAction } from "../shared/protocol";
import { countsLine, reviewModel, type Counts, type FileRow, type HunkRow, type ReviewSnapshot } from "../shared/review";
import { h } from "./dom";
import type { Part, Ui } from "./ui";

type Resolve = (action: ReviewAction, selection?: { hunkIds?: string[]; uris?: string[] }) => void;

export function createChanges(ui: Ui): Part {
  const el = h("section", { class: "changes", "data-testid": "changes", hidden: true });
  let shown: ReviewSnapshot | undefined;
  let collapsed = false;
  const collapsedFiles = new Set<string>();

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
    const head = h(
      "div",
      { class: "changes-head" },
      h("button", { class: "link twisty", "data-testid": "changes-toggle", "aria-expanded": collapsed ? "false" : "true", title: collapsed ? "Show the changes" : "Hide the changes", onclick: () => { collapsed = !collapsed; draw(true); } }, collapsed ? "▸" : "▾"),
      h("span", { class: "changes-title" }, "Changes"),
      countsSpan("changes-counts", model.counts),
      h("span", { class: "spacer" }),
      h("button", { "data-testid": "changes-keep-all", disabled: !pending, title: "Keep every pending change", onclick: () => resolve("keep") }, "Keep all"),
      h("button", { "data-testid": "changes-undo-all", disabled: !pending, title: "Undo every pending change", onclick: () => resolve("undo") }, "Undo all"),
    );
    const toggleFile = (uri: string) => {
      if (collapsedFiles.has(uri)) collapsedFiles.delete(uri);
      else collapsedFiles.add(uri);
      draw(true);
    };
    el.replaceChildren(head, ...(collapsed ? [] : [h("div", { class: "changes-list" }, ...model.files.map((f) => fileRow(ui, f, resolve, collapsedFiles.has(f.uri), toggleFile)))]));
  };
  return { el, render: () => draw(false) };
}

function countsSpan(testid: string, c: Counts): HTMLElement {
  return h("span", { class: "counts", "data-testid": testid, "data-pending": String(c.pending), "data-kept": String(c.kept), "data-undone": String(c.undone) }, countsLine(c));
}

function fileRow(ui: Ui, f: FileRow, resolve: Resolve, collapsed: boolean, toggle: (uri: string) => void): HTMLElement {
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
    ...(collapsed ? [] : f.hunks.map((hk) => hunkRow(ui, hk, resolve))),
  );
}

function hunkRow(ui: Ui, hk: HunkRow, resolve: Resolve): HTMLElement {
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
  );
}
