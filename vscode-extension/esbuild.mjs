// Bundles the extension (Node, CommonJS, `vscode` external) and the webview (browser IIFE) into dist/.
import * as esbuild from "esbuild";
import { copyFileSync, mkdirSync } from "node:fs";

const watch = process.argv.includes("--watch");
const production = !watch;
const common = { bundle: true, sourcemap: !production, minify: production, logLevel: "info", legalComments: "linked" };

mkdirSync("dist", { recursive: true });
copyFileSync("src/webview/style.css", "dist/webview.css");
const builds = [
  { ...common, entryPoints: ["src/extension.ts"], outfile: "dist/extension.js", platform: "node", format: "cjs", target: "node20", external: ["vscode"] },
  { ...common, entryPoints: ["src/webview/main.ts"], outfile: "dist/webview.js", platform: "browser", format: "iife", target: "chrome120" },
];
if (watch) {
  for (const options of builds) await (await esbuild.context(options)).watch();
} else {
  await Promise.all(builds.map((options) => esbuild.build(options)));
}
