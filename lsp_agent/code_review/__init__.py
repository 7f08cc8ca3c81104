"""The agent's review of the person's changes (issue 37 §1): the diff from git, the model's
findings as data (``findings.py``), the review request (``review.py``).

Not to be confused with ``core/review/``: the person's review of the AGENT's edits.
"""
