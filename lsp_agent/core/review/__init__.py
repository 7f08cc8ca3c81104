"""Review: every change the agent's steps made, hunk by hunk, until the user keeps or undoes it.

``hunks`` turns a step's before/after text of a file into line hunks; ``record`` reads those
texts from the step's snapshot trees (``review_recorded``); ``ledger`` folds the session's
events into the list of hunks and their statuses; ``locate`` finds each hunk in the file's
current text; ``reviews`` answers ``list`` and carries out ``keep``/``undo``
(``review_resolved``); ``note`` is what the model is told about the hunks the user undid.
"""
