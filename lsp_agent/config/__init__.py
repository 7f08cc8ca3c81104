"""What the user configured: the settings files merged and validated (``settings``), the
built-in model facts (``catalog``) and the models a session may switch to (``models``).
"""
