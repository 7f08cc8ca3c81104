/**
 * Pasted or dropped images as the protocol's `image` blocks (docs/protocol.md "Images"): what the
 * panel accepts before anything is sent. Pure, so the unit tests check it without a page.
 */
import { IMAGE_TYPES, MAX_IMAGE_BYTES, type ImageBlock, type ImageType } from "./protocol";

/** An image block from a `data:` URL (what `FileReader.readAsDataURL` gives), or why not. */
export function imageFromDataUrl(dataUrl: string, name: string | undefined, size: number): ImageBlock | string {
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(dataUrl);
  const type = match?.[1] ?? "";
  if (!match || !(IMAGE_TYPES as readonly string[]).includes(type)) {
    return `${name ?? "this file"}: not a PNG, JPEG, GIF or WebP image`;
  }
  if (size > MAX_IMAGE_BYTES) return `${name ?? "the image"}: over ${MAX_IMAGE_BYTES / (1024 * 1024)} MiB`;
  const block: ImageBlock = { type: "image", mimeType: type as ImageType, data: match[2] };
  if (name) block.name = name;
  return block;
}

/** The chip text of an image waiting to be sent: `shot.png · 12 KB`. */
export function imageLabel(image: ImageBlock): string {
  const bytes = Math.floor((image.data.length * 3) / 4);
  const size = bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${Math.round(bytes / 1024)} KB` : `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
  return `${image.name ?? "image"} · ${size}`;
}
