"""The relay benchmark (bench/relay.py) runs end to end at a tiny size and reports numbers.

It checks the measurement, not the speed: a benchmark reports, it does not assert.
"""

from __future__ import annotations

import json

import pytest

from bench import relay


def test_the_relay_bench_measures_every_delta(capsys: pytest.CaptureFixture[str]) -> None:
    assert relay.main(["--rates", "1000,2000", "--deltas", "40", "--timeout", "30"]) == 0
    out = capsys.readouterr().out
    report = json.loads(out.strip().splitlines()[-1])
    assert [r["target_rate"] for r in report["results"]] == [1000, 2000]
    for result in report["results"]:
        assert result["deltas"] == 40
        assert result["missing"] == 0
        assert result["achieved_rate"] > 0
        assert 0 < result["p50_ms"] <= result["p90_ms"] <= result["p99_ms"] <= result["max_ms"]
        assert isinstance(result["sustained"], bool)
    assert report["goal"]["rate"] == 2000
    assert isinstance(report["goal"]["met"], bool)
    assert "goal p99 <= 20 ms at 2000 deltas/s" in out
