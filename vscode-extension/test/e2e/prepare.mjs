// Installs the e2e's own packages (code-server, playwright-core) into test/e2e/node_modules when
// they are missing or older than test/e2e/package-lock.json; `npm run test:e2e` runs it first.
// They are kept out of the extension's package.json: building or packaging the extension needs
// none of them (code-server's install builds native modules and fetches ripgrep).
import { execFileSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const installed = join(here, "node_modules", ".package-lock.json");
const lock = join(here, "package-lock.json");
if (!existsSync(installed) || statSync(installed).mtimeMs < statSync(lock).mtimeMs) {
  console.log("e2e: installing code-server and playwright-core into test/e2e/node_modules");
  execFileSync("npm", ["ci", "--no-audit", "--no-fund"], {
    cwd: here,
    stdio: "inherit",
    env: {
      ...process.env,
      // `npm run` passes its config on: the extension's ignore-scripts must not reach this tree,
      // whose packages need their install scripts
      npm_config_ignore_scripts: "false",
      // code-server's postinstall refuses to run as root unless this is "true" (a setting npm
      // itself dropped in v7, hence npm's one "Unknown env config" warning here)
      npm_config_unsafe_perm: "true",
    },
  });
}
