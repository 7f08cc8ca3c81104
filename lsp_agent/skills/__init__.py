"""Skills: ``SKILL.md`` folders found in the workspace and the user's config, read through
the instruction-file wall (``catalog``). The ``skill`` tool and the context read them.
"""
