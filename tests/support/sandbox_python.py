"""An interpreter a sandboxed command can run, for tests that pipe a program into it."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile


def sandbox_python() -> str:
    """The test's own interpreter where the sandbox shows it, else the system's: the
    sandbox's /tmp is its own, so a venv under /tmp (a CI clone there, say) is out of sight,
    and so is root's home (a pyenv there), hidden when the agent runs as root."""
    real = os.path.realpath(sys.executable)
    if not real.startswith(("/tmp/", tempfile.gettempdir() + "/", "/root/")):
        return real
    return shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin") or real
