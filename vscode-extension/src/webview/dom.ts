/** The page's one DOM helper: `h(tag, attrs, ...children)`; `on…` attributes become listeners. */

export type Attrs = Record<string, string | boolean | undefined | ((e: Event) => void)>;
export type Child = Node | string | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (typeof v === "function") el.addEventListener(k.replace(/^on/, ""), v as EventListener);
    else if (k === "class") el.className = String(v);
    else if (v === true) el.setAttribute(k, "");
    else el.setAttribute(k, v);
  }
  for (const c of children) if (c !== undefined && c !== false) el.append(c);
  return el;
}
