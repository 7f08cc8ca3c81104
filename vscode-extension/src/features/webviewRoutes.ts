/**
 * The panel's messages to the host, as a table: one handler per message type (`ready` and
 * `resync` are the view's own, chatView.ts). A type the table lacks is a compile error, so a new
 * panel message cannot be forgotten here.
 */
import type { WebviewMessage } from "../shared/reducer";

type Routed = Exclude<WebviewMessage["type"], "ready" | "resync">;

export type Routes = { [K in Routed]: (msg: Extract<WebviewMessage, { type: K }>) => unknown };

/** The router for `routes`: runs the message's handler (its error is shown by the view). */
export function router(routes: Routes): (msg: WebviewMessage) => Promise<void> {
  return async (msg) => {
    if (msg.type === "ready" || msg.type === "resync") return;
    const route = routes[msg.type] as (m: WebviewMessage) => unknown;
    await route(msg);
  };
}
