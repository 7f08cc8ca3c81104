"""The floors the goals are judged against, measured on this machine in the same run.

- the interpreter importing a provider SDK (``python -c "import anthropic"``, spawn to exit);
- a bare pygls server answering ``initialize`` (the same client and timing as ``serve``).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from bench import serve_path

BARE_SERVER = Path(__file__).with_name("bare_pygls.py")


def sdk_import_ms(module: str) -> float:
    """Spawn → exit of an interpreter that only imports ``module``."""
    begun = time.monotonic()
    subprocess.run([sys.executable, "-c", f"import {module}"], check=True)
    return (time.monotonic() - begun) * 1000


def interpreter_ms() -> float:
    """Spawn → exit of a bare interpreter (``python -c pass``): the part every CLI pays."""
    begun = time.monotonic()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return (time.monotonic() - begun) * 1000


async def bare_pygls_initialize_ms(env: dict[str, str], folder: Path) -> float:
    command = [sys.executable, str(BARE_SERVER)]
    async with serve_path.started(env, folder, command, plain=True) as (_, elapsed):
        return elapsed
