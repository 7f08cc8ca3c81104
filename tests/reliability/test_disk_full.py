"""A full data disk: the turn stops with a clear error, the database stays sound, and the next
run works once space is freed.

The data folder is a 3 MiB tmpfs mounted in a private mount namespace (``unshare -m``, as
root): nothing outside the test sees it, and it vanishes with the namespace. A first run
creates the session; a filler file then leaves ~600 KiB free, and the second turn streams
~1 MiB of text, so an event append fails with ENOSPC mid-stream. The shell script records each
step's exit status and output in the test's folder (outside the tmpfs).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from lsp_agent.testing.fake_llm import running_fake_llm
from tests.reliability.conftest import KEY, MODELS, RUN_TIMEOUT, no_traceback

STEPS = r"""
set -u
mount -t tmpfs -o size=3m tmpfs "$LSP_AGENT_DATA_DIR" || exit 90
cd "$WS"
agent() { "$PY" -m lsp_agent run --model "$MODEL" "$@"; }
agent "first" > "$OUT/out1" 2> "$OUT/err1"; echo $? > "$OUT/rc1"
"$PY" -m lsp_agent sessions list --json > "$OUT/sessions" 2>&1
SID=$("$PY" -c 'import json,sys; print(json.load(sys.stdin)["sessions"][0]["sessionId"])' \
    < "$OUT/sessions")
FREE=$(stat -f -c %a "$LSP_AGENT_DATA_DIR")
dd if=/dev/zero of="$LSP_AGENT_DATA_DIR/filler" bs=4096 count=$((FREE - 150)) 2>/dev/null
agent --session "$SID" "second" > "$OUT/out2" 2> "$OUT/err2"; echo $? > "$OUT/rc2"
cp "$LSP_AGENT_DATA_DIR"/lsp-agent.db* "$OUT/copy/"
rm -f "$LSP_AGENT_DATA_DIR/filler"
agent --session "$SID" "third" > "$OUT/out3" 2> "$OUT/err3"; echo $? > "$OUT/rc3"
"$PY" -m lsp_agent sessions show "$SID" --json > "$OUT/show" 2> "$OUT/show.err"
"""


def _can_mount_tmpfs() -> bool:
    """Root, ``unshare``, and a tmpfs mount allowed in a private namespace (a container
    without CAP_SYS_ADMIN refuses it)."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    namespace = ["unshare", "-m", "--propagation", "private"]
    with tempfile.TemporaryDirectory() as folder:
        probe = subprocess.run(
            [*namespace, "mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", folder],
            capture_output=True,
            check=False,
        )
    return probe.returncode == 0


@pytest.mark.skipif(not _can_mount_tmpfs(), reason="needs root and unshare -m (CI runs as root)")
def test_a_full_data_disk_fails_clearly_and_the_next_run_works(tmp_path: Path) -> None:
    data = Path(os.environ["LSP_AGENT_DATA_DIR"])
    data.mkdir(parents=True, exist_ok=True)
    ws, out = tmp_path / "ws", tmp_path / "out"
    ws.mkdir()
    (out / "copy").mkdir(parents=True)
    long_answer = [f"w{i:05d}-{'x' * 300} " for i in range(3000)]
    script = [{"text": "first answer"}, {"text": long_answer}, {"text": "third answer"}]
    with running_fake_llm(script) as server:
        env = {
            **os.environ,
            "ANTHROPIC_BASE_URL": server.anthropic_base_url,
            "ANTHROPIC_API_KEY": KEY,
            "MODEL": MODELS["anthropic"],
            "PY": sys.executable,
            "WS": str(ws),
            "OUT": str(out),
        }
        done = subprocess.run(
            ["unshare", "-m", "--propagation", "private", "sh", "-c", STEPS],
            env=env,
            capture_output=True,
            text=True,
            timeout=3 * RUN_TIMEOUT,
            check=False,
        )
        served = [r.turn for r in server.requests if r.turn != "side"]
    assert done.returncode == 0, done.stderr

    def step(name: str) -> str:
        return (out / name).read_text()

    assert step("rc1").strip() == "0", step("err1")
    assert served == [0, 1, 2]  # the second turn failed mid-stream, not before its request
    # The full disk: a clear error, no traceback, exit status 1.
    assert step("rc2").strip() == "1", step("err2")
    assert "is full" in step("err2")
    no_traceback(step("err2"))
    # The database as the failed run left it is sound.
    conn = sqlite3.connect(out / "copy" / "lsp-agent.db")
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()
    # Space freed: the same session goes on, and it is consistent.
    assert step("rc3").strip() == "0", step("err3")
    assert step("out3").strip().endswith("third answer")
    shown = json.loads(step("show"))
    assert shown["session"]["state"] == "idle"
    parts = [p for m in shown["messages"] for p in m["parts"] if p["type"] == "tool_call"]
    assert not parts
    assert not any(m["status"] == "streaming" for m in shown["messages"])
    texts = [p.get("text", "") for m in shown["messages"] for p in m["parts"]]
    assert "first answer" in texts
    assert "third answer" in texts
