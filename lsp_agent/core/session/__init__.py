"""Sessions: ``SessionService`` (``service``) is the front door every adapter calls; beside
it, one module per job it delegates: revert and undo, subtasks, titles, config options, and
events written outside a turn.
"""
