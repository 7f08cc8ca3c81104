"""The secret filter: secrets known by value (the agent's keys, ``.env`` values) and by
shape (``patterns``), masked in every tool output and context file (``filter``).
"""
