"""``python -m bench --long --quick`` runs end to end and writes the long-session section with
a number in every cell it measures, so the harness cannot rot. It checks the measurement,
never the speed."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from tests.integration.test_bench_quick import ROOT

NUMBER = re.compile(r"^[\d,]+(\.\d+)?×?$")


def test_the_quick_long_bench_writes_every_figure(tmp_path: Path) -> None:
    out = tmp_path / "report"
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--long", "--quick", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    text = (out / "benchmarks.md").read_text()
    assert "<!-- bench-long:start -->" in text
    assert "<!-- bench-long:end -->" in text
    lines = [line for line in text.splitlines() if line.startswith("| lsp-agent |")]
    assert len(lines) == 4  # 10 and 40 steps, through run and serve
    for line in lines:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        _agent, path, steps, first, last, growth = cells[:6]
        assert path in ("`run`", "`serve`")
        assert steps in ("10", "40")
        for value in (first, last, growth):
            assert NUMBER.match(value), (line, value)
        assert re.match(r"^[\d.]+ → [\d.,]+ \([\d.]+ → [\d.]+\)$", cells[7]), line
    assert re.search(r"peak RSS of `run` over every size: lsp-agent [\d.]+ MiB", text)
    raw = json.loads((out / "benchmarks-long.json").read_text())
    sizes = sorted((s["path"], s["steps"], len(s["gaps_ms"])) for s in raw["sessions"])
    assert sizes == [("run", 10, 10), ("run", 40, 40), ("serve", 10, 10), ("serve", 40, 40)]
    for session in raw["sessions"]:
        # Every step's request is one step longer: the conversation grew, none compacted.
        assert session["body_bytes"] == sorted(session["body_bytes"])
        assert len(session["tenths_ms"]) == 10
