"""The network side of ``webfetch``: the address guard, no private targets unless a host is
allowed and DNS pinned against rebinding (``netguard``), one approved fetch with its
redirects and body (``fetch``, loaded on the first fetch), what a fetch may do (``limits``)
and HTML to Markdown or text (``html_convert``).
"""
