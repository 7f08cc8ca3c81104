"""Permission rules as data: their matching and the verdict they give (``rules``), and the
files no rule can open without asking (``protected``). The gate that applies them to a
turn's tool calls, asking the user when the rules say ``ask``, is ``core/turn/permission_gate.py``.
"""
