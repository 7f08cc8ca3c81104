"""docs/benchmarks.md and its chart, written from one bench run's results.

Ratios: "vs opencode" is opencode's median over ours (how many times faster, or smaller, we
are); "vs goal" is ours over the goal (≤ 1.00 meets it). Goals relative to a floor use the
floor measured in the same run.
"""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
from collections.abc import Callable
from pathlib import Path

import attrs

from bench.results import Results, Samples
from bench.stats import Summary

START, END = "<!-- bench:start -->", "<!-- bench:end -->"


@attrs.frozen(kw_only=True)
class Row:
    label: str
    key: str
    unit: str
    opencode_key: str | None = None
    goal: Callable[[Results], float | None] | None = None
    goal_text: str = "–"


def _floor(key: str, extra: float) -> Callable[[Results], float | None]:
    def goal(results: Results) -> float | None:
        median = results.floors.summary(key).median
        return None if median is None else median + extra

    return goal


def _fixed(value: float) -> Callable[[Results], float | None]:
    return lambda _: value


ROWS = [
    Row(label="`run`: start → first model request (OpenAI)", key="run.first_ms", unit="ms",
        opencode_key="run.first_ms", goal=_floor("import.openai_ms", 250),
        goal_text="≤ import openai + 250 ms"),
    Row(label="`run`: start → first model request (Anthropic)", key="run_anthropic.first_ms",
        unit="ms", goal=_floor("import.anthropic_ms", 250),
        goal_text="≤ import anthropic + 250 ms"),
    Row(label="`run`: agent overhead, read step", key="run.read_ms", unit="ms",
        opencode_key="run.read_ms", goal=_fixed(5), goal_text="≤ 5 ms"),
    Row(label="`run`: agent overhead, edit step", key="run.edit_ms", unit="ms",
        opencode_key="run.edit_ms", goal=_fixed(5), goal_text="≤ 5 ms"),
    Row(label="`serve`: spawn → `initialize` answered", key="serve.spawn_ms", unit="ms",
        goal=_floor("pygls_init_ms", 150), goal_text="≤ bare pygls + 150 ms"),
    Row(label="`serve`, warm: read step", key="serve.read_ms", unit="ms", goal=_fixed(5),
        goal_text="≤ 5 ms"),
    Row(label="`serve`, warm: edit step", key="serve.edit_ms", unit="ms", goal=_fixed(5),
        goal_text="≤ 5 ms"),
    Row(label="`serve`: prompt → first model request", key="serve.prompt_first_ms", unit="ms",
        goal=_fixed(10), goal_text="≤ 10 ms"),
    Row(label="peak RSS, `run`", key="run.rss_mib", unit="MiB", opencode_key="run.rss_mib",
        goal=_fixed(60), goal_text="≤ 60 MiB"),
    Row(label="peak RSS, `serve` (VmHWM after each turn)", key="serve.rss_mib", unit="MiB",
        goal=_fixed(100), goal_text="≤ 100 MiB"),
    Row(label="`run`: whole run, wall", key="run.wall_s", unit="s", opencode_key="run.wall_s"),
    Row(label="`run`: whole run, CPU (process tree)", key="run.cpu_s", unit="s",
        opencode_key="run.cpu_s"),
    Row(label="`serve`: CPU per turn", key="serve.turn_cpu_ms", unit="ms"),
    Row(label="request bytes: system prompt", key="run.system_bytes", unit="B",
        opencode_key="run.system_bytes"),
    Row(label="request bytes: tool definitions", key="run.tools_bytes", unit="B",
        opencode_key="run.tools_bytes"),
    Row(label="large repo, `run`: read step", key="large.run.read_ms", unit="ms",
        goal=_fixed(5), goal_text="≤ 5 ms"),
    Row(label="large repo, `run`: edit step", key="large.run.edit_ms", unit="ms",
        goal=_fixed(5), goal_text="≤ 5 ms"),
    Row(label="large repo, `serve`: read step", key="large.serve.read_ms", unit="ms",
        goal=_fixed(5), goal_text="≤ 5 ms"),
    Row(label="large repo, `serve`: edit step", key="large.serve.edit_ms", unit="ms",
        goal=_fixed(5), goal_text="≤ 5 ms"),
]  # fmt: skip

FLOOR_ROWS = [
    ("bare interpreter (`python -c pass`)", "python_ms"),
    ("interpreter importing `openai`", "import.openai_ms"),
    ("interpreter importing `anthropic`", "import.anthropic_ms"),
    ("bare pygls server: spawn → `initialize` answered", "pygls_init_ms"),
]


def number(value: float | None, unit: str = "") -> str:
    if value is None:
        return "–"
    if unit == "B":
        return f"{value:,.0f}"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def _spread(summary: Summary, unit: str) -> str:
    if summary.n == 0:
        return "–"
    return (
        f"{number(summary.p95, unit)} / {number(summary.max, unit)} "
        f"({number(summary.min, unit)}–{number(summary.max, unit)}, n={summary.n})"
    )


def _row(row: Row, results: Results) -> str:
    ours = results.ours.summary(row.key)
    theirs = results.opencode.summary(row.opencode_key) if row.opencode_key else Summary.of([])
    vs_opencode = "–"
    if ours.median and theirs.median:
        vs_opencode = f"{theirs.median / ours.median:.1f}×"
    goal = row.goal(results) if row.goal else None
    vs_goal = "–"
    if goal and ours.median is not None:
        ratio = ours.median / goal
        over = f"+{number(ours.median - goal, row.unit)} {row.unit}"
        vs_goal = f"{ratio:.2f} (met)" if ratio <= 1 else f"{ratio:.2f} (not met, {over})"
    goal_text = row.goal_text if goal is None else f"{row.goal_text} = {number(goal, row.unit)}"
    return (
        f"| {row.label} | {row.unit} | {number(theirs.median, row.unit)} | "
        f"{number(ours.median, row.unit)} | {_spread(ours, row.unit)} | {vs_opencode} | "
        f"{goal_text} | {vs_goal} |"
    )


def _count(value: str, noun: str) -> str:
    return f"{value} {noun}" if value == "1" else f"{value} {noun}s"


def _git_version() -> str:
    try:
        done = subprocess.run(["git", "version"], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return "git: not found"
    return done.stdout.strip()


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (
        f"{os.cpu_count()} cores ({cpu}), load average {load:.2f} at the end, "
        f"{platform.system()} {platform.release()}, Python {platform.python_version()}, "
        f"{_git_version()}"
    )


def _extras(results: Results) -> list[str]:
    ex = results.extras
    lines = ["| Figure | Value |", "|---|---|"]
    for prefix, label in (("run", "`run`"), ("serve", "`serve`"), ("opencode", "opencode")):
        if f"{prefix}.prefix_share" not in ex:
            continue
        share = ex.get(f"{prefix}.prefix_share")
        text = "–" if share is None else f"{share:.1%}"
        lines.append(f"| prefix stability, {label}: least share of a request repeated as the "
                     f"next one's prefix | {text} |")  # fmt: skip
    for repo in ("small", "large"):
        track = ex.get(f"snapshot.{repo}")
        if track:
            lines.append(
                f"| snapshot `track()` in the {repo} repo: first / unchanged / 1 file changed "
                f"(median ms) | {number(track['first']['median'])} / "
                f"{number(track['unchanged']['median'])} / {number(track['changed']['median'])} |"
            )
    relay = ex.get("relay")
    if relay:
        lines.append(
            f"| LSP relay latency at {relay['target_rate']:.0f} deltas/s ({relay['deltas']} "
            f"deltas): p50 / p99 / max | {number(relay['p50_ms'])} / {number(relay['p99_ms'])} "
            f"/ {number(relay['max_ms'])} ms |"
        )
    load = ex.get("session_load")
    if load:
        lines.append(
            f"| loading a {load['events']:,}-event session into a client "
            f"(`agent/session/load`, full replay, {load['updates']:,} updates) "
            f"| {number(load['load_ms'])} ms |"
        )
    return lines


def _floors(results: Results) -> list[str]:
    lines = ["| Floor | median ms | p95 / max (min–max, n) |", "|---|---|---|"]
    for label, key in FLOOR_ROWS:
        summary = results.floors.summary(key)
        lines.append(f"| {label} | {number(summary.median)} | {_spread(summary, 'ms')} |")
    return lines


def section(results: Results, command: str, chart: str | None) -> str:
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    s = results.settings
    lines = [
        START,
        f"Produced by `{command}` on {when}: {_count(s['runs'], 'counted run')} after "
        f"{_count(s['warmup'], 'warm-up run')}, alternating A/B.",
        "",
        f"Machine: {machine()}.",
        "",
        "| Figure | unit | opencode 1.18.33 (median) | lsp-agent (median) | "
        "lsp-agent p95 / max (min–max, n) | vs opencode | goal | vs goal |",
        "|---|---|---|---|---|---|---|---|",
        *(_row(row, results) for row in ROWS),
        "",
        *_floors(results),
        "",
        *_extras(results),
        "",
    ]
    if results.notes:
        lines += [*(f"- {note}" for note in results.notes), ""]
    if chart is not None:
        lines += [f"![medians, lsp-agent vs opencode]({chart})", ""]
    else:
        lines += ["- no chart: matplotlib is not installed (`pip install -e '.[bench]'`)", ""]
    lines.append(END)
    return "\n".join(lines)


def write_chart(results: Results, path: Path) -> bool:
    """A bar chart of the time medians, ours beside opencode's and the goal; False if
    matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    rows = [r for r in ROWS if r.unit == "ms" and results.ours.summary(r.key).median]
    labels = [r.label.replace("`", "") for r in rows]
    ours = [results.ours.summary(r.key).median or 0 for r in rows]
    theirs = [_median(results.opencode, r.opencode_key) for r in rows]
    goals = [(r.goal(results) if r.goal else None) for r in rows]
    fig, ax = plt.subplots(figsize=(10, 0.45 * len(rows) + 1.5))
    ys = list(range(len(rows)))
    ax.barh([y - 0.2 for y in ys], ours, height=0.4, label="lsp-agent", color="#3b7dd8")
    ax.barh([y + 0.2 for y in ys], [t or 0 for t in theirs], height=0.4,
            label="opencode 1.18.33", color="#d8833b")  # fmt: skip
    goal_ys = [y for y, g in zip(ys, goals, strict=True) if g]
    ax.scatter([g for g in goals if g], goal_ys, marker="|", s=300, color="black", label="goal")
    ax.set_yticks(ys, labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlim(left=1)
    ax.set_xlabel("milliseconds (median, log scale)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def _median(samples: Samples, key: str | None) -> float | None:
    return samples.summary(key).median if key else None


def write(results: Results, out: Path, command: str) -> Path:
    """Write benchmarks.md (and benchmarks.png) into ``out``; the Markdown file's path."""
    out.mkdir(parents=True, exist_ok=True)
    chart = out / "benchmarks.png"
    has_chart = write_chart(results, chart)
    body = section(results, command, chart.name if has_chart else None)
    return replace_section(out / "benchmarks.md", body, START, END)


def replace_section(doc: Path, body: str, start: str, end: str) -> Path:
    """Put ``body`` (which begins with ``start`` and ends with ``end``) in place of the part of
    ``doc`` between those markers, or at its end; the rest of the file is the reader's."""
    text = doc.read_text() if doc.exists() else HEADER
    if start in text and end in text:
        head, rest = text.split(start, 1)
        text = head + body + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + body + "\n"
    doc.write_text(text)
    return doc


HEADER = """# Benchmarks

Generated by `python -m bench` (see bench/__main__.py); the part between the markers is
rewritten by every run.
"""
