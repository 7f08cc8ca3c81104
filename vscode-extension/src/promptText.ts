/**
 * The prompt as the user typed it, from the blocks the server recorded: without the block of
 * editor context the server adds to a prompt ("Editor context:\n…", docs/protocol.md "Focus and
 * mentions"), so an Undo puts back only the user's words. No VS Code here: unit-tested.
 */
import type { ContentBlock } from "./shared/protocol";

/** The first line of the text block the server adds with the editor's focus. */
export const EDITOR_CONTEXT_PREFIX = "Editor context:\n";

export function typedPrompt(blocks: readonly ContentBlock[] | undefined): string {
  return (blocks ?? [])
    .flatMap((b) => (b.type === "text" && !b.text.startsWith(EDITOR_CONTEXT_PREFIX) ? [b.text] : []))
    .join("\n");
}
