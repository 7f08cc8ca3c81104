"""The network side of ``webfetch``: the address guard, no private targets unless a host is
allowed and DNS pinned against rebinding (``netguard``), and HTML to Markdown or text
(``html_convert``).
"""
