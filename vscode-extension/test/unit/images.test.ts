/** The panel's pasted or dropped images: what becomes an `image` block, what is refused and why. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { imageFromDataUrl, imageLabel } from "../../src/shared/images";
import { MAX_IMAGE_BYTES } from "../../src/shared/protocol";

const PNG = "iVBORw0KGgo=";

describe("pasted and dropped images", () => {
  it("a PNG data URL becomes an image block named by its file", () => {
    assert.deepEqual(imageFromDataUrl(`data:image/png;base64,${PNG}`, "shot.png", 8), { type: "image", mimeType: "image/png", data: PNG, name: "shot.png" });
    assert.deepEqual(imageFromDataUrl(`data:image/webp;base64,${PNG}`, undefined, 8), { type: "image", mimeType: "image/webp", data: PNG });
  });

  it("other types and oversized images are refused, saying why", () => {
    assert.equal(imageFromDataUrl("data:image/svg+xml;base64,PHN2Zz4=", "logo.svg", 5), "logo.svg: not a PNG, JPEG, GIF or WebP image");
    assert.equal(imageFromDataUrl("data:text/plain,hello", "a.txt", 5), "a.txt: not a PNG, JPEG, GIF or WebP image");
    assert.equal(imageFromDataUrl(`data:image/png;base64,${PNG}`, "big.png", MAX_IMAGE_BYTES + 1), "big.png: over 5 MiB");
  });

  it("a chip says the name and the size", () => {
    assert.equal(imageLabel({ type: "image", mimeType: "image/png", data: "A".repeat(4096), name: "shot.png" }), "shot.png · 3 KB");
  });
});
