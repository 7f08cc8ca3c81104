"""The inline-completion benchmark (bench/completion.py) runs end to end at a tiny size and
reports its numbers. It checks the measurement, not the speed: a benchmark reports."""

from __future__ import annotations

import json

import pytest

from bench import completion


def test_the_completion_bench_measures_a_typing_session(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert completion.main(["--words", "4", "--model-ms", "5"]) == 0
    out = capsys.readouterr().out
    report = json.loads(out.strip().splitlines()[-1])
    assert report["keystrokes"] == len("".join(w + " " for w in completion.WORDS[:4]))
    assert report["answers"] >= 1
    assert report["requests_completed_per_100_keys"] > 0
    assert report["requests_started_per_100_keys"] < 50  # debounced: far fewer than the keys
    assert 0 < report["shown_p50_ms"] <= report["shown_p95_ms"]
    assert report["overhead_p50_ms"] is not None
    assert report["tokens_per_hour"] > 0
    assert "agent overhead p50 / p95" in out
