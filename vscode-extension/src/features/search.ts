/** "LSP Agent: Search Sessions": a quick pick that searches every past session as you type; the chosen one opens in the panel. */
import * as vscode from "vscode";
import { LiveSearch, type SearchItem } from "../sessionSearch";
import { Commands } from "./commands";
import { command, type Deps } from "./deps";

export interface Search {
  /** Opens the search with `initial` typed; answers the session opened, if any. */
  searchSessions(initial: string): Promise<string | undefined>;
}

export function register(context: vscode.ExtensionContext, { store, chat }: Deps): Search {
  async function searchSessions(initial: string) {
    const pick = vscode.window.createQuickPick<SearchItem>();
    const title = "LSP Agent: Search Sessions";
    const everywhere = { iconPath: new vscode.ThemeIcon("globe"), tooltip: "Search every workspace" };
    const here = { iconPath: new vscode.ThemeIcon("folder"), tooltip: "Search this workspace only" };
    let all = false;
    pick.title = title;
    pick.placeholder = 'Words from a prompt, an answer or a tool\'s output ("a phrase", prefix*)';
    pick.matchOnDescription = false;
    pick.matchOnDetail = false;
    // the label is the snippet, where the typed words are highlighted; the server's order (best
    // first) stays: VS Code would sort highlighted labels first (QuickPick.sortByLabel, which the
    // extension host honours though its typing is still a proposal)
    (pick as vscode.QuickPick<SearchItem> & { sortByLabel?: boolean }).sortByLabel = false;
    pick.buttons = [everywhere];
    const live = new LiveSearch((query) => store.search(query, { everywhere: all }), {
      busy: (on) => (pick.busy = on),
      show: (items, query) => {
        pick.title = title;
        pick.items = items;
        if (!items.length && query.trim()) pick.title = `${title}: nothing found${all ? "" : " in this workspace"}`;
      },
      fail: (message) => {
        pick.items = [];
        pick.title = `${title}: ${message}`;
      },
    });
    const chosen = new Promise<SearchItem | undefined>((resolve) => {
      pick.onDidChangeValue((value) => live.update(value));
      pick.onDidTriggerButton((button) => {
        all = button === everywhere;
        pick.buttons = [all ? here : everywhere];
        live.update(pick.value);
      });
      pick.onDidAccept(() => {
        resolve(pick.selectedItems[0]);
        pick.hide();
      });
      pick.onDidHide(() => resolve(undefined));
    });
    pick.value = initial;
    pick.show();
    if (initial) live.update(initial);
    const item = await chosen;
    live.dispose();
    pick.dispose();
    if (!item) return undefined;
    await chat.reveal(true);
    await store.open(item.sessionId);
    return item.sessionId;
  }

  context.subscriptions.push(command(Commands.searchSessions, (query?: unknown) => searchSessions(typeof query === "string" ? query : "")));
  return { searchSessions };
}
