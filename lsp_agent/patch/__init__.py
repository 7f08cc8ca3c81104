"""Text changes as data: the ``apply_patch`` envelope parsed (``parse``), hunks applied to
text (``apply``), and the tolerant matching ``edit`` uses to find its old text
(``edit_match``). Pure functions over strings; only ``workspace`` for newline/BOM facts.
"""
