"""What the user configured: the settings as validated models (``settings``), loaded and merged
from their layers (``load``), a model reference resolved to its provider and limits
(``resolve``), the built-in model facts (``catalog``) and the models a session may switch to
(``models``).
"""
