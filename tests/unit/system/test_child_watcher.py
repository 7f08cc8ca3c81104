"""The command line's child watcher: a subprocess's exit is seen through a pidfd, with no
thread started per child. A fresh interpreter, as ``lsp-agent`` itself starts."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import asyncio, json, sys, threading
from lsp_agent.system.child_watcher import use_pidfd_child_watcher

installed = use_pidfd_child_watcher()

async def main():
    names = set()
    for _ in range(3):
        process = await asyncio.create_subprocess_exec("true")
        names |= {t.name for t in threading.enumerate()}
        await process.wait()
    return process.returncode, sorted(names)

code, names = asyncio.run(main())
watcher = None
if sys.version_info < (3, 12):  # 3.12 picks pidfds by itself; the watcher API is deprecated
    watcher = type(asyncio.get_event_loop_policy().get_child_watcher()).__name__
print(json.dumps({"installed": installed, "code": code, "threads": names, "watcher": watcher}))
"""


def test_subprocesses_are_watched_through_pidfds_without_a_thread_each() -> None:
    done = subprocess.run(
        [sys.executable, "-W", "ignore::DeprecationWarning", "-c", PROBE],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    seen = json.loads(done.stdout)
    on_311 = sys.version_info < (3, 12)
    assert seen["installed"] is on_311
    assert seen["watcher"] == ("PidfdChildWatcher" if on_311 else None)
    assert seen["code"] == 0
    assert not [name for name in seen["threads"] if name.startswith("waitpid")]
