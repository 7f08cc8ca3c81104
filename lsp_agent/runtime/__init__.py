"""The one session host every front door drives (issue 34 §1).

``lsp/``, ``acp/`` and ``cli.py`` map their protocol onto it: the store and one agent per
folder (``host.py``), the stored sessions (``sessions.py``), and the turns (``turns.py``).
"""
