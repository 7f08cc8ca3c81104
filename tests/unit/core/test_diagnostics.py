"""The diagnostics cache (replacement, generations, waiting, bounds) and the formatter."""

from __future__ import annotations

import asyncio

import pytest

from lsp_agent.core.diagnostics import (
    ERROR,
    HINT,
    INFORMATION,
    WARNING,
    Diagnostic,
    DiagnosticsCache,
    count_by_severity,
    format_diagnostics,
    severity_summary,
)


def diag(
    line: int,
    message: str = "bad",
    *,
    severity: int | None = ERROR,
    character: int = 0,
    source: str | None = None,
    code: str | None = None,
) -> Diagnostic:
    return Diagnostic(
        line=line,
        character=character,
        end_line=line,
        end_character=character + 1,
        message=message,
        severity=severity,
        source=source,
        code=code,
    )


# --- the cache --------------------------------------------------------------------------


def test_an_update_replaces_the_whole_list_of_its_path() -> None:
    cache = DiagnosticsCache()
    cache.update("/ws/a.py", [diag(1), diag(2)])
    cache.update("/ws/b.py", [diag(3)])

    cache.update("/ws/a.py", [diag(5)])

    assert cache.get("/ws/a.py") == (diag(5),)
    assert cache.get("/ws/b.py") == (diag(3),)
    assert cache.all() == {"/ws/a.py": (diag(5),), "/ws/b.py": (diag(3),)}


def test_an_empty_update_means_no_problems_and_the_path_stays_known() -> None:
    cache = DiagnosticsCache()
    cache.update("/ws/a.py", [diag(1)])
    before = cache.generation("/ws/a.py")

    cache.update("/ws/a.py", [])

    assert cache.get("/ws/a.py") == ()
    assert cache.known("/ws/a.py")
    assert cache.all() == {}
    assert cache.generation("/ws/a.py") > before


def test_a_path_never_reported_is_unknown_with_generation_zero() -> None:
    cache = DiagnosticsCache()
    cache.update("/ws/a.py", [])

    assert not cache.known("/ws/b.py")
    assert cache.get("/ws/b.py") == ()
    assert cache.generation("/ws/b.py") == 0


def test_every_update_raises_the_generation() -> None:
    cache = DiagnosticsCache()
    seen = []
    for _ in range(3):
        cache.update("/ws/a.py", [diag(1)])
        seen.append(cache.generation("/ws/a.py"))
        cache.update("/ws/b.py", [])

    assert seen == sorted(set(seen))
    assert seen[0] > 0


def test_the_oldest_updated_path_is_forgotten_first() -> None:
    cache = DiagnosticsCache(max_paths=2)
    cache.update("/ws/a.py", [diag(1)])
    cache.update("/ws/b.py", [diag(1)])
    cache.update("/ws/a.py", [diag(2)])  # a is now the newest

    cache.update("/ws/c.py", [diag(1)])

    assert not cache.known("/ws/b.py")
    assert cache.known("/ws/a.py")
    assert cache.known("/ws/c.py")
    assert set(cache.all()) == {"/ws/a.py", "/ws/c.py"}


def test_a_forgotten_path_reported_again_still_gets_a_higher_generation() -> None:
    cache = DiagnosticsCache(max_paths=1)
    cache.update("/ws/a.py", [diag(1)])
    old = cache.generation("/ws/a.py")
    cache.update("/ws/b.py", [])  # forgets a

    cache.update("/ws/a.py", [diag(2)])

    assert cache.generation("/ws/a.py") > old


def test_a_huge_list_keeps_the_most_severe_diagnostics() -> None:
    cache = DiagnosticsCache(max_per_path=2)

    cache.update("/ws/a.py", [diag(1, severity=HINT), diag(9, severity=ERROR), diag(5)])

    assert cache.get("/ws/a.py") == (diag(5), diag(9))


def test_the_bounds_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least one"):
        DiagnosticsCache(max_paths=0)


async def test_wait_newer_wakes_when_the_path_is_updated() -> None:
    cache = DiagnosticsCache()
    cache.update("/ws/a.py", [])
    generation = cache.generation("/ws/a.py")
    loop = asyncio.get_running_loop()
    loop.call_soon(cache.update, "/ws/b.py", [diag(1)])  # another path: no wake-up
    loop.call_later(0.02, cache.update, "/ws/a.py", [diag(1)])

    assert await cache.wait_newer("/ws/a.py", generation, 5.0)
    assert cache.get("/ws/a.py") == (diag(1),)


async def test_wait_newer_answers_at_once_when_a_newer_report_is_there() -> None:
    cache = DiagnosticsCache()
    cache.update("/ws/a.py", [])
    generation = cache.generation("/ws/a.py")
    cache.update("/ws/a.py", [diag(1)])

    assert await cache.wait_newer("/ws/a.py", generation, 0)


async def test_wait_newer_times_out_without_a_report() -> None:
    cache = DiagnosticsCache()
    cache.update("/ws/a.py", [])
    generation = cache.generation("/ws/a.py")
    asyncio.get_running_loop().call_soon(cache.update, "/ws/b.py", [])

    assert not await cache.wait_newer("/ws/a.py", generation, 0.05)
    assert not await cache.wait_newer("/ws/a.py", generation, 0)


async def test_wait_newer_wakes_every_waiter_of_the_path() -> None:
    cache = DiagnosticsCache()
    waits = [asyncio.create_task(cache.wait_newer("/ws/a.py", 0, 5.0)) for _ in range(3)]
    await asyncio.sleep(0)

    cache.update("/ws/a.py", [])

    assert await asyncio.gather(*waits) == [True, True, True]


async def test_a_cancelled_wait_leaves_later_waits_working() -> None:
    cache = DiagnosticsCache()
    waiting = asyncio.create_task(cache.wait_newer("/ws/a.py", 0, 5.0))
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    asyncio.get_running_loop().call_soon(cache.update, "/ws/a.py", [])

    assert await cache.wait_newer("/ws/a.py", 0, 5.0)


# --- formatting -------------------------------------------------------------------------


def test_the_block_lists_diagnostics_by_position_one_based() -> None:
    block = format_diagnostics(
        "src/a.py",
        [
            diag(11, "later", severity=WARNING, character=4, source="pyright"),
            diag(2, "first", character=0, source="ruff", code="F821"),
            diag(11, "same line, earlier", severity=HINT, character=0),
            diag(20, "note", severity=INFORMATION, code="X1"),
        ],
    )

    assert block == (
        '<diagnostics file="src/a.py">\n'
        "ERROR [3:1] first (ruff F821)\n"
        "HINT [12:1] same line, earlier\n"
        "WARNING [12:5] later (pyright)\n"
        "INFO [21:1] note (X1)\n"
        "</diagnostics>"
    )


def test_an_unset_or_unknown_severity_counts_as_an_error() -> None:
    block = format_diagnostics("a.py", [diag(0, severity=None), diag(1, severity=7)])

    assert block.splitlines()[1:3] == ["ERROR [1:1] bad", "ERROR [2:1] bad"]


def test_min_severity_filters_and_nothing_left_gives_an_empty_string() -> None:
    diagnostics = [diag(0, "e"), diag(1, "w", severity=WARNING), diag(2, "h", severity=HINT)]

    assert format_diagnostics("a.py", diagnostics, min_severity=ERROR).splitlines()[1:-1] == [
        "ERROR [1:1] e"
    ]
    assert format_diagnostics("a.py", diagnostics[1:], min_severity=ERROR) == ""
    assert format_diagnostics("a.py", []) == ""


def test_above_the_limit_the_most_severe_are_kept_and_the_rest_counted() -> None:
    diagnostics = [diag(n, f"hint {n}", severity=HINT) for n in range(5)]
    diagnostics += [diag(10, "error"), diag(7, "warning", severity=WARNING)]

    block = format_diagnostics("a.py", diagnostics, limit=3)

    assert block.splitlines()[1:] == [
        "HINT [1:1] hint 0",
        "WARNING [8:1] warning",
        "ERROR [11:1] error",
        "… and 4 more",
        "</diagnostics>",
    ]


def test_long_and_multi_line_messages_stay_readable() -> None:
    block = format_diagnostics(
        "a.py", [diag(0, "mismatched types\nexpected `u8`\n"), diag(1, "x" * 5000)]
    )

    lines = block.splitlines()
    assert lines[1:3] == ["ERROR [1:1] mismatched types", "  expected `u8`"]
    assert len(lines[3]) < 1100
    assert lines[3].endswith("…")


def test_counts_and_their_summary() -> None:
    counts = count_by_severity(
        [diag(0), diag(1), diag(2, severity=WARNING), diag(3, severity=INFORMATION)]
    )

    assert counts == {ERROR: 2, WARNING: 1, INFORMATION: 1}
    assert severity_summary(counts) == "2 errors, 1 warning, 1 info"
    assert severity_summary({HINT: 3}) == "3 hints"
    assert severity_summary({}) == ""
