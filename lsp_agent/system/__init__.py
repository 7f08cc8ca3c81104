"""Operating-system facts and primitives, each in one place (standard library only).

- :mod:`~lsp_agent.system.procfs`: ``/proc/<pid>/stat`` read and parsed — state, parent,
  process group and start time of a process;
- :mod:`~lsp_agent.system.owner`: a process named across pid reuse (pid and start time),
  and whether it still runs;
- :mod:`~lsp_agent.system.atomic`: a file replaced whole or not at all (a synced temporary
  file beside it, ``os.replace``, the folder synced);
- :mod:`~lsp_agent.system.private_files`: folders ``0700`` and files ``0600``, whatever the
  umask;
- :mod:`~lsp_agent.system.prctl`: ``prctl(2)`` through ctypes;
- :mod:`~lsp_agent.system.programs`: helper programs (git, bwrap, rg, env, the shell) found
  outside the workspace folders;
- :mod:`~lsp_agent.system.git_process`: the only way the agent runs git (scrubbed
  environment, the repository's program-running keys overridden, a timeout);
- :mod:`~lsp_agent.system.git_files`: a repository's own files read without blocking;
- :mod:`~lsp_agent.system.fast_exit`: the process ended at once after its command (threads
  joined, ``atexit`` run, streams flushed, then ``os._exit``: no interpreter teardown).

Nothing here imports the rest of the agent, and this file imports nothing: the command
supervisor (``sandbox/supervisor.py``, a standalone script) uses ``procfs`` and ``prctl``.
"""
