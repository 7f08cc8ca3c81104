"""A bare pygls language server: nothing but ``initialize`` (the floor of ``serve`` start)."""

from pygls.lsp.server import LanguageServer

if __name__ == "__main__":
    LanguageServer("bare", "1").start_io()
