"""Text changes as data: the ``apply_patch`` envelope parsed (``parse``), hunks applied to
text (``apply``), the tolerant matching ``edit`` uses to find its old text (``edit_match``),
and the user's own version of a proposed change with the note the model reads about it
(``user_edits``). Pure functions over strings; only ``workspace`` for newline/BOM facts.
"""
