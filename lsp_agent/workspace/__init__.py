"""The workspace as files: the wall (``boundary``), reading and writing through the editor
(``files``), atomic temp files and their journal (``temp_files``), spill files and the central
output limit (``spill``, ``truncation``), and the reader of instruction files
(``context_read``). Imports only the core and ``system``; no tool, no adapter.
"""
