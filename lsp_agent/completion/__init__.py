"""Inline completion and next-edit suggestions for the editor: ghost text at the cursor and
one predicted edit elsewhere in the file, from ``agents.completion.model``, aware of the
agent's task (its plan and pending hunks). Pure of any protocol: ``lsp/`` maps
``textDocument/inlineCompletion`` and ``agent/nextEdit`` onto :mod:`.inline` and
:mod:`.next_edit` (docs/protocol.md §12a; the keys: docs/configuration.md)."""
