"""Sessions: ``SessionService`` (``service``) is the front door every adapter calls; beside
it, one module per job it delegates: a turn's configuration from the session's mode and model
(``turn_setup``), revert and undo, subtasks, titles and config options. Events written
outside a turn go through ``core/event_writer.py``.
"""
