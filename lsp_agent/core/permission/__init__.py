"""Permission: rules and their matching, as data (``rules``), and the gate that decides
every tool's request, asking the user when the rules say ``ask`` (``gate``).
"""
