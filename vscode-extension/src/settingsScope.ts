/**
 * Which settings the user set and which a workspace set (issue 31, point 4).
 *
 * `lspAgent.serverCommand`, `serverEnv` and `config` decide what runs and what the agent trusts, so
 * they are application-scoped in package.json (VS Code ignores them in a workspace's
 * `.vscode/settings.json` and a `.code-workspace` file, and restricts them in an untrusted
 * workspace) — and, to be robust whatever VS Code does with a scope, they are read here only from
 * the user's (global) value, never from `workspaceValue` or `workspaceFolderValue`. The other
 * forwarded settings (`model`, `mode`) may come from a workspace: those go to the server as
 * `workspaceConfig`, which it checks like the project file (untrusted unless the folder is trusted).
 */

/** The part of `vscode.WorkspaceConfiguration` used here (so this module runs without VS Code). */
export interface InspectableSettings {
  inspect<T>(key: string):
    | {
        defaultValue?: T;
        globalValue?: T;
        workspaceValue?: T;
        workspaceFolderValue?: T;
        globalLanguageValue?: T;
        workspaceLanguageValue?: T;
        workspaceFolderLanguageValue?: T;
      }
    | undefined;
}

/** Settings only the user may set: a workspace's values are never read. */
export const USER_ONLY_SETTINGS = ["serverCommand", "serverEnv", "config"] as const;
/** Settings forwarded to the server that a workspace may set (untrusted there). */
export const FORWARDED_SETTINGS = ["model", "mode"] as const;

/**
 * Forwarded settings that are a nested key of the server's config (a workspace may set them too):
 * `lspAgent.completion.enabled` is `completion.enabled` (issue 36). Sent only when set, so the
 * config files decide otherwise; merged into what `lspAgent.config` says of the same section.
 */
export const FORWARDED_NESTED_SETTINGS = { "completion.enabled": ["completion", "enabled"] } as const;

/** The user's own value of `key` (the user settings), else the default. */
export function userValue<T>(settings: InspectableSettings, key: (typeof USER_ONLY_SETTINGS)[number]): T | undefined {
  const inspected = settings.inspect<T>(key);
  return inspected?.globalValue ?? inspected?.defaultValue;
}

/** What `initializationOptions.agent` forwards: `config` (the user's layer) and `workspaceConfig`. */
export function forwardedConfig(settings: InspectableSettings): {
  config?: Record<string, unknown>;
  workspaceConfig?: Record<string, unknown>;
} {
  const config: Record<string, unknown> = { ...(userValue<Record<string, unknown>>(settings, "config") ?? {}) };
  const workspaceConfig: Record<string, unknown> = {};
  for (const key of FORWARDED_SETTINGS) {
    const inspected = settings.inspect<string>(key);
    const fromWorkspace = inspected?.workspaceFolderValue ?? inspected?.workspaceValue;
    if (fromWorkspace) workspaceConfig[key] = fromWorkspace;
    else if (inspected?.globalValue) config[key] = inspected.globalValue;
  }
  for (const [key, [section, name]] of Object.entries(FORWARDED_NESTED_SETTINGS)) {
    const inspected = settings.inspect<unknown>(key);
    const fromWorkspace = inspected?.workspaceFolderValue ?? inspected?.workspaceValue;
    const [target, value] = fromWorkspace !== undefined ? [workspaceConfig, fromWorkspace] : [config, inspected?.globalValue];
    if (value === undefined) continue;
    const current = target[section];
    target[section] = { ...(current && typeof current === "object" ? current : {}), [name]: value };
  }
  return {
    ...(Object.keys(config).length ? { config } : {}),
    ...(Object.keys(workspaceConfig).length ? { workspaceConfig } : {}),
  };
}
