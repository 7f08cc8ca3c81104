/** A Copy button on each code block (answers and tool output): the block's text to the clipboard. */
import { h } from "./dom";

export function copyButtons(root: HTMLElement): void {
  for (const pre of Array.from(root.querySelectorAll("pre"))) {
    if (pre.classList.contains("command") || pre.parentElement?.classList.contains("code-block")) continue;
    const button = h("button", { class: "copy", "data-testid": "code-copy", title: "Copy to the clipboard", "aria-label": "Copy code" }, "Copy");
    button.addEventListener("click", () => {
      const text = pre.textContent ?? "";
      void copyText(text).then((ok) => {
        button.textContent = ok ? "Copied" : "Copy failed";
        setTimeout(() => (button.textContent = "Copy"), 1500);
      });
    });
    const wrapper = h("div", { class: "code-block" });
    pre.replaceWith(wrapper);
    wrapper.append(button, pre);
  }
}

/** The clipboard API where the webview allows it, else a selected textarea and `copy`. */
async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = h("textarea", { class: "copy-buffer", "aria-hidden": "true" });
    area.value = text;
    document.body.append(area);
    area.select();
    const ok = document.execCommand("copy");
    area.remove();
    return ok;
  }
}
