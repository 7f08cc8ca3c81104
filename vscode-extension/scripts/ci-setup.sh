#!/usr/bin/env bash
# What the e2e of `npm test` in vscode-extension/ needs on a fresh Debian machine (run as root,
# before it; only Debian's and npm's registries are used):
#  - chromium for the e2e test (playwright-core drives Debian's, it downloads no browser);
#  - a C toolchain, pkg-config and the Kerberos headers for code-server's native modules;
#  - ripgrep: code-server's nested install of @vscode/ripgrep 1.15.11 downloads rg from GitHub in
#    its postinstall unless its cache already has the archive, so the cache is seeded with Debian's
#    rg (the same 13.0.0).
# test/e2e/.npmrc and test/e2e/prepare.mjs set the rest for the e2e's own install (yes for node-pty's
# install script, nodedir for node-gyp, unsafe-perm for code-server's). Building and packaging the
# extension need none of this. The e2e also needs the repo's .venv with lsp_agent (./scripts/test
# makes it), or LSP_AGENT_PYTHON.
set -euo pipefail

need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v rg >/dev/null 2>&1 || need+=(ripgrep)
{ command -v make && command -v g++; } >/dev/null 2>&1 || need+=(build-essential)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
[ -e /usr/include/gssapi/gssapi.h ] || need+=(libkrb5-dev)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
fi

case "$(uname -m)" in
  x86_64) target=x86_64-unknown-linux-musl ;;
  aarch64) target=aarch64-unknown-linux-musl ;;
  *) echo "ci-setup: no ripgrep cache recipe for $(uname -m)" >&2; exit 1 ;;
esac
cache="${TMPDIR:-/tmp}/vscode-ripgrep-cache-1.15.11"
archive="$cache/ripgrep-v13.0.0-10-$target.tar.gz"
if [ ! -s "$archive" ]; then
  staging="$(mktemp -d)"
  mkdir -p "$cache"
  cp "$(command -v rg)" "$staging/rg"
  tar czf "$archive" -C "$staging" rg
  rm -rf "$staging"
fi
[ -e /usr/include/node/node.h ] || echo "ci-setup: warning: no Node headers in /usr/include/node (.npmrc nodedir=/usr); node-gyp would try to download them" >&2
echo "ci-setup: ok (chromium $(chromium --version 2>/dev/null | awk '{print $2}'), ripgrep cache $archive)"
