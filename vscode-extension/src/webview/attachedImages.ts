/**
 * Images pasted or dropped into the prompt input: kept as chips (× removes one) until the prompt
 * is sent with them as `image` blocks. A file that is not an image the models take, or too big,
 * shows why for a moment and is not kept.
 */
import type { ImageBlock } from "../shared/protocol";
import { imageFromDataUrl, imageLabel } from "../shared/images";
import { h } from "./dom";

export interface AttachedImages {
  el: HTMLElement;
  /** The images to send, and forget them (the prompt took them). */
  take(): ImageBlock[];
}

export function attachImages(input: HTMLTextAreaElement): AttachedImages {
  let images: ImageBlock[] = [];
  const el = h("div", { class: "row input-chips", "data-testid": "image-chips" });
  el.hidden = true;

  const render = (problem?: string) => {
    el.replaceChildren(
      ...images.map((image, i) =>
        h(
          "span",
          { class: "chip image-chip", "data-testid": "image-chip", title: image.name ?? "image" },
          h("img", { class: "image-thumb", src: `data:${image.mimeType};base64,${image.data}`, alt: image.name ?? "image" }),
          imageLabel(image),
          h("button", { class: "link", "data-testid": "image-chip-remove", title: "Send without it", onclick: () => { images = images.filter((_, j) => j !== i); render(); } }, "×"),
        ),
      ),
      ...(problem ? [h("span", { class: "chip image-problem", "data-testid": "image-problem" }, problem)] : []),
    );
    el.hidden = !el.childElementCount;
  };

  const add = (files: File[]) => {
    for (const file of files) {
      const reader = new FileReader();
      reader.onload = () => {
        const found = imageFromDataUrl(String(reader.result), file.name || undefined, file.size);
        if (typeof found === "string") return render(found);
        images = [...images, found];
        render();
      };
      reader.readAsDataURL(file);
    }
  };
  const filesOf = (items: DataTransfer | null): File[] =>
    Array.from(items?.files ?? []).filter((f) => f.type.startsWith("image/") || /\.(png|jpe?g|gif|webp)$/i.test(f.name));

  input.addEventListener("paste", (e) => {
    const files = filesOf(e.clipboardData);
    if (!files.length) return; // text: the input takes it
    e.preventDefault();
    add(files);
  });
  input.addEventListener("dragover", (e) => {
    if (e.dataTransfer?.types.includes("Files")) e.preventDefault();
  });
  input.addEventListener("drop", (e) => {
    const files = filesOf(e.dataTransfer);
    if (!files.length) return;
    e.preventDefault();
    add(files);
  });
  return {
    el,
    take: () => {
      const taken = images;
      images = [];
      render();
      return taken;
    },
  };
}
