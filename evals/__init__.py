"""``python -m evals``: small real coding tasks run through the real agent, each judged by a
hidden checker (docs/evals.md)."""
