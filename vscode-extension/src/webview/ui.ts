/** What every part of the page gets from `main.ts`: the current state and the way to the host. */
import type { ChatState, WebviewMessage } from "../shared/reducer";
import type { CodeRef } from "../shared/codeRefs";

export interface Ui {
  /** The panel's state as the reducer last left it. */
  state(): ChatState;
  post(msg: WebviewMessage): void;
  /** A `path:line[:col]` in an answer was clicked. */
  openCodeRef(ref: Pick<CodeRef, "path" | "line" | "column">): void;
}

/** A part of the page: its element and how it redraws itself from the state. */
export interface Part<E extends HTMLElement = HTMLElement> {
  el: E;
  render(): void;
}
