"""``python -m bench --startup --quick`` runs end to end (lsp-agent alone: cold, and warm
through the warm process) and writes the startup section with a number in every cell it
measures, the floors and a verdict for each goal, so the harness cannot rot. It checks the
measurement, never the speed."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from tests.integration.test_bench_quick import ROOT

FIGURE = re.compile(r"^[\d,]+(\.\d+)? \([\d,]+(\.\d+)?–[\d,]+(\.\d+)?\)$")


def cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def test_the_quick_startup_bench_writes_every_figure(tmp_path: Path) -> None:
    out = tmp_path / "report"
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--startup", "--quick", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    text = (out / "benchmarks.md").read_text()
    section = text.split("<!-- bench-startup:start -->", 1)[1].split("<!-- bench-startup:end -->")[
        0
    ]
    rows = {
        cells(line)[0]: cells(line)[1:] for line in section.splitlines() if line.startswith("|")
    }
    for label in ("whole run, spawn → exit, s", "spawn → first model request, ms",
                  "last answer → exit, ms", "peak RSS, MiB"):  # fmt: skip
        claude, opencode, cold, warm = rows[label]
        assert (claude, opencode) == ("–", "–")  # --quick: no peers
        assert FIGURE.match(cold), (label, cold)
        assert FIGURE.match(warm), (label, warm)
    assert re.match(r"^[\d,.]+ \(", rows["interpreter importing `anthropic`, spawn → exit (the "
                    "SDK-import floor)"][0])  # fmt: skip
    verdicts = [v[0] for k, v in rows.items() if k.startswith(("cold:", "warm:", "`serve`:"))]
    assert len(verdicts) == 7
    assert verdicts.count("not measured") == 1  # the warm run against Claude Code's
    assert set(verdicts) <= {"met", "not met", "not measured"}
    raw = json.loads((out / "benchmarks-startup.json").read_text())
    assert len(raw["agents"]["cold"]["exit_ms"]) == 1
    assert len(raw["agents"]["warm"]["first_ms"]) == 1
    assert "Claude Code and opencode not measured (--quick or --no-peers)" in section
