"""The agent protocol's JSON shapes that both front doors send (docs/protocol.md).

``updates``: committed events → ``agent/session/update`` params, which the language server
streams and ``lsp-agent run --json`` prints one per line. The core records events; what they
look like on the wire is decided here, beside the adapters, so the core builds no JSON.
"""
