"""Compaction: when and where to fold a long conversation into a summary (``policy``), and
the summary request itself (``summary``).
"""
