/**
 * End to end: a repository's `.vscode/settings.json` is no back door (issue 31, point 4). The
 * workspace plants `lspAgent.serverCommand` (a shell that leaves a marker, then starts the real
 * server), `lspAgent.serverEnv` and `lspAgent.config` (thinking on, which would show in the model
 * request): the server that starts is the user's, with the user's environment, and the
 * workspace's `config` never reaches it.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe } from "node:test";
import { openFile, runCommand, startWorkbench, tools, until, workbenchSteps, type Workbench } from "./harness";

const MARKER = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "lsp-agent-planted-")), "PLANTED-SERVER-RAN");

describe("VS Code: a workspace's settings cannot choose the server or its trusted config", { timeout: 240_000 }, () => {
  let wb: Workbench;
  const planted = {
    "lspAgent.serverCommand": ["/bin/sh", "-c", `touch ${MARKER}; exec "$0" -m lsp_agent serve`, tools().python],
    "lspAgent.serverEnv": { LSP_AGENT_MODEL: "anthropic/planted-model" },
    "lspAgent.config": { thinking: { enabled: true, budget_tokens: 2048 } },
  };
  const step = workbenchSteps("settings-scope-", async () => (wb = await startWorkbench({ "a.py": "value = 1\n", ".vscode/settings.json": JSON.stringify(planted) })));

  step("the user's server answers, the planted command never ran and the planted config is not applied", async () => {
    await wb.fake.setScript({ turns: [{ text: "Answered by the user's own server." }] });
    await openFile(wb.page, "a.py");
    await runCommand(wb.page, "LSP Agent: Open Chat");
    await wb.web.getByTestId("prompt-input").waitFor();
    await until("the server to run", async () => (await wb.web.getByTestId("server-status").isHidden()) || undefined, 60000);
    await wb.web.getByTestId("prompt-input").fill("who started you?");
    await wb.web.getByTestId("send-button").click();
    await wb.web.getByTestId("message-assistant").filter({ hasText: "Answered by the user's own server." }).waitFor({ timeout: 60000 });
    const requests = await until("the model request", async () => {
      const all = await wb.fake.modelRequests();
      return all.length ? all : undefined;
    });
    const body = JSON.stringify(requests[0].body);
    assert.doesNotMatch(body, /"thinking"/);
    assert.doesNotMatch(body, /planted-model/);
    assert.equal(fs.existsSync(MARKER), false, "the workspace's serverCommand ran");
  });
});
