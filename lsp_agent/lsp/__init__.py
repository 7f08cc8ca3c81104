"""The language server front door (``lsp-agent serve``; docs/protocol.md).

- ``features``: every feature the server registers, and ``serve``;
- ``server``: the connection — the hardened JSON-RPC protocol and the stdio/TCP transports;
- ``framing``: the byte stream split into messages (size cap, resynchronisation);
- ``protocol``: the typed ``agent/*`` methods and commands (pydantic models);
  ``schema``: docs/protocol.schema.json from them;
- ``handlers``: one small function per ``agent/*`` method; ``commands``: code actions and the
  ``lspAgent.*`` commands; ``errors``: exceptions → JSON-RPC errors;
- ``host``: what the server holds once initialized, and the LSP client adapted to the core's
  ports (the agent comes from ``app.load_agent``);
- ``editor``: the core's ``Editor`` over LSP; ``documents``: open documents and uris;
  ``stream``: the event log relayed as ``agent/session/update``; ``plain``: progress and
  transcripts for a plain LSP client; ``turns``: one turn at a time per session.
"""
