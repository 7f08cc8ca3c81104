"""An agent from npm, installed once into its own folder of the bench's cache."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


def install(folder: Path, package: str, command: str, timeout: float = 600) -> Path | str:
    """``folder``'s ``node_modules/.bin/<command>``, installed with ``npm install --prefix``
    on first use; or why it is not available."""
    binary = folder / "node_modules" / ".bin" / command
    if binary.exists():
        return binary
    npm = shutil.which("npm")
    if npm is None:
        return "npm is not installed"
    folder.mkdir(parents=True, exist_ok=True)
    argv = [npm, "install", "--prefix", str(folder), "--no-audit", "--no-fund", package]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"npm install {package} timed out after {timeout:.0f} s"
    if done.returncode != 0 or not binary.exists():
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        return f"npm install {package} failed: {tail[0]}"
    return binary
