"""``python -m lsp_agent`` is the ``lsp-agent`` command."""

from lsp_agent.cli import entry

entry()
