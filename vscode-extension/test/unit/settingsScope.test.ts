/**
 * A repository's `.vscode/settings.json` is no back door (issue 31, point 4): the settings that
 * decide what runs or what is trusted are application-scoped and restricted in untrusted workspaces
 * (package.json), read only from the user's own value, and the forwarded settings a workspace may
 * set reach the server as `workspaceConfig` (untrusted), never as `config` (the user's layer).
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import { forwardedConfig, type InspectableSettings, USER_ONLY_SETTINGS, userValue } from "../../src/settingsScope";

const PACKAGE = JSON.parse(fs.readFileSync(path.resolve(__dirname, "../../../package.json"), "utf8"));

type Values = { defaultValue?: unknown; globalValue?: unknown; workspaceValue?: unknown; workspaceFolderValue?: unknown };
function settings(values: Record<string, Values>): InspectableSettings {
  return { inspect: <T>(key: string) => values[key] as { globalValue?: T } | undefined };
}

const HOSTILE: Values = { workspaceValue: ["/repo/evil-server"], workspaceFolderValue: ["/repo/evil"] };

describe("settings that decide what runs or what is trusted", () => {
  it("are application-scoped and restricted in untrusted workspaces", () => {
    const properties = PACKAGE.contributes.configuration.properties;
    const restricted: string[] = PACKAGE.capabilities.untrustedWorkspaces.restrictedConfigurations;
    assert.equal(PACKAGE.capabilities.untrustedWorkspaces.supported, "limited");
    for (const name of USER_ONLY_SETTINGS) {
      assert.equal(properties[`lspAgent.${name}`].scope, "application", name);
      assert.ok(restricted.includes(`lspAgent.${name}`), name);
    }
  });

  it("are read from the user's value only, never a workspace's", () => {
    for (const name of USER_ONLY_SETTINGS) {
      assert.equal(userValue(settings({ [name]: { defaultValue: undefined, ...HOSTILE } }), name), undefined);
      assert.deepEqual(userValue(settings({ [name]: { globalValue: ["/usr/bin/lsp-agent"], ...HOSTILE } }), name), [
        "/usr/bin/lsp-agent",
      ]);
    }
  });

  it("forward a workspace's lspAgent.config nowhere and its model or mode only as workspaceConfig", () => {
    const forwarded = forwardedConfig(
      settings({
        config: { globalValue: { max_steps: 30 }, workspaceValue: { permission: { bash: "allow" } } },
        model: { globalValue: "anthropic/user-model", workspaceValue: "openai/project-model" },
        mode: { workspaceFolderValue: "build" },
      }),
    );
    assert.deepEqual(forwarded.config, { max_steps: 30 });
    assert.deepEqual(forwarded.workspaceConfig, { model: "openai/project-model", mode: "build" });
  });

  it("forward the user's own model and mode as the user's layer", () => {
    const forwarded = forwardedConfig(settings({ model: { globalValue: "anthropic/m" }, mode: { globalValue: "plan" } }));
    assert.deepEqual(forwarded, { config: { model: "anthropic/m", mode: "plan" } });
  });

  it("forward lspAgent.completion.enabled as completion.enabled, merged with lspAgent.config's completion section, only when set", () => {
    assert.deepEqual(forwardedConfig(settings({ "completion.enabled": { defaultValue: false } })), {});
    assert.deepEqual(
      forwardedConfig(settings({ "completion.enabled": { globalValue: true }, config: { globalValue: { completion: { exclude: ["*.env"] } } } })),
      { config: { completion: { exclude: ["*.env"], enabled: true } } },
    );
    // off on purpose is sent too (it overrides a config file that turns it on)
    assert.deepEqual(forwardedConfig(settings({ "completion.enabled": { globalValue: false } })), { config: { completion: { enabled: false } } });
    // a workspace's value is the workspace's (untrusted) layer, never the user's
    assert.deepEqual(forwardedConfig(settings({ "completion.enabled": { globalValue: false, workspaceValue: true } })), {
      workspaceConfig: { completion: { enabled: true } },
    });
  });
});
