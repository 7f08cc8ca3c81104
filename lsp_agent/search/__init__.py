"""Finding files and code: ripgrep, the bundled binary, as an async subprocess
(``ripgrep``), glob matching (``globmatch``), the order results are shown in (``order``), and
what the editor's own language servers know: the ``EditorQueries`` port the code-navigation
tools ask (``editor_queries``) and their answers read into small values (``code_shapes``).
"""
