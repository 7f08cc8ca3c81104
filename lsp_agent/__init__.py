"""lsp-agent: a coding agent that lives inside a language server."""

__version__ = "0.1.0"
__all__ = ["__version__"]
