"""Finding files: ripgrep, the bundled binary, as an async subprocess (``ripgrep``), glob
matching (``globmatch``) and the order results are shown in (``order``).
"""
