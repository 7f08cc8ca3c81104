/**
 * Turns the code references in rendered answers (`src/a.py:12`, `a.py:3:5`) into links that
 * open the file at that line. It walks the text nodes of the already sanitized HTML, so no
 * markup is ever built from the model's text; text inside links and code blocks is left alone
 * (inline `code` is not: that is where models usually put a reference).
 */
import { findCodeRefs, type CodeRef } from "../shared/codeRefs";

export function linkCodeRefs(root: HTMLElement, open: (ref: CodeRef) => void): void {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const texts: Text[] = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!(node.parentElement?.closest("a, pre"))) texts.push(node as Text);
  }
  for (const text of texts) {
    const value = text.data;
    const refs = findCodeRefs(value);
    if (refs.length === 0) continue;
    const parts = document.createDocumentFragment();
    let at = 0;
    for (const ref of refs) {
      parts.append(value.slice(at, ref.start));
      parts.append(anchor(value.slice(ref.start, ref.end), ref, open));
      at = ref.end;
    }
    parts.append(value.slice(at));
    text.replaceWith(parts);
  }
}

function anchor(label: string, ref: CodeRef, open: (ref: CodeRef) => void): HTMLAnchorElement {
  const a = document.createElement("a");
  a.href = "#";
  a.className = "code-ref";
  a.textContent = label;
  a.title = `Open ${ref.path} at line ${ref.line}`;
  a.dataset.testid = "code-ref";
  a.dataset.path = ref.path;
  a.dataset.line = String(ref.line);
  if (ref.column) a.dataset.column = String(ref.column);
  a.addEventListener("click", (event) => {
    event.preventDefault();
    open(ref);
  });
  return a;
}
