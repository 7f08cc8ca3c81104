"""``lsp-agent acp``: the Agent Client Protocol (v1) front door, over stdio (docs/acp.md).

An adapter beside ``lsp/``, one module per job: ``server.py`` (the process entry),
``transport.py`` (newline-delimited JSON, malformed lines answered), ``peer.py`` (requests to
the client, its capabilities), ``dispatch.py`` (every method, validated), ``host.py`` (the
agent per workspace, sessions, turns and cancel), ``content.py`` (prompt blocks),
``updates.py`` (events → ``session/update``), ``permission.py`` and ``editor.py`` (the core's
``Editor`` port over the client's files and permission dialog). ``terminal.py`` and
``elicitation.py``: bash through the client's terminal, questions through elicitation.
"""
