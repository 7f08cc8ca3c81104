"""Test-only clients and helpers (never shipped): the scripted LSP editor, the LSP tap, the
provider environment for a fake LLM."""
