"""``python -m bench --quick`` runs end to end and writes a report with a number in every row
it measures — so the bench harness cannot rot. It checks the measurement, never the speed."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NUMBER = re.compile(r"^[\d,]+(\.\d+)?$")
MEASURED_BY_QUICK = [
    "`run`: start → first model request (OpenAI)",
    "`run`: start → first model request (Anthropic)",
    "`run`: agent overhead, read step",
    "`run`: agent overhead, edit step",
    "`serve`: spawn → `initialize` answered",
    "`serve`, warm: read step",
    "`serve`, warm: edit step",
    "`serve`: prompt → first model request",
    "peak RSS, `run`",
    "peak RSS, `serve` (VmHWM after each turn)",
    "`run`: whole run, wall",
    "`run`: whole run, CPU (process tree)",
    "request bytes: system prompt",
    "request bytes: tool definitions",
]
FLOORS = [
    "interpreter importing `openai`",
    "interpreter importing `anthropic`",
    "bare pygls server: spawn → `initialize` answered",
]


def table_rows(text: str) -> dict[str, list[str]]:
    rows = {}
    for line in text.splitlines():
        if line.startswith("| ") and not line.startswith("|---"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            rows[cells[0]] = cells[1:]
    return rows


def test_the_quick_bench_writes_every_figure(tmp_path: Path) -> None:
    out = tmp_path / "report"
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    text = (out / "benchmarks.md").read_text()
    rows = table_rows(text)
    for label in MEASURED_BY_QUICK:
        _unit, opencode, ours, spread = rows[label][:4]
        assert NUMBER.match(ours), (label, ours)
        assert "n=1" in spread, (label, spread)
        assert opencode == "–", "--quick measures ours only"
    for label in FLOORS:
        assert NUMBER.match(rows[label][0]), (label, rows[label])
    assert "opencode not measured" in text
    assert re.search(r"\| loading a 10,\d{3}-event session into a client .* \| [\d,.]+ ms \|", text)
    assert re.search(
        r"LSP relay latency at 2000 deltas/s .* \| [\d.]+ / [\d.]+ / [\d.]+ ms \|", text
    )
    assert re.search(r"prefix stability, `run`.* \| \d+\.\d% \|", text)
    raw = json.loads((out / "benchmarks.json").read_text())
    assert len(raw["ours"]["run.read_ms"]) == 1
    assert raw["extras"]["session_load"]["updates"] >= 10_000
    if importlib.util.find_spec("matplotlib") is not None:
        assert (out / "benchmarks.png").stat().st_size > 0
        assert "![medians" in text
    else:
        assert "no chart: matplotlib is not installed" in text
