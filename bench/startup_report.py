"""The startup section of docs/benchmarks.md and its chart, from one ``--startup`` run.

Goals (issue 38), each judged by figures of the same run: cold spawn → first request ≤ the
``import anthropic`` floor + 0.25 s, the cold whole run ≤ that floor + 0.5 s, last answer →
exit ≤ 50 ms, warm spawn → first request ≤ 0.15 s, the warm whole run faster than Claude
Code's, and ``serve``'s spawn → ``initialize`` answered ≤ a bare pygls server + 150 ms.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from pathlib import Path

import attrs

from bench import claude_code, opencode
from bench.report import machine, number, replace_section
from bench.startup import StartupResults

START, END = "<!-- bench-startup:start -->", "<!-- bench-startup:end -->"
COLUMNS = (
    ("claude", claude_code.NAME),
    ("opencode", f"opencode {opencode.VERSION}"),
    ("cold", "lsp-agent cold"),
    ("warm", "lsp-agent warm"),
)


def median(results: StartupResults, agent: str, key: str) -> float | None:
    return results.agents[agent].summary(key).median


def floor(results: StartupResults, key: str) -> float | None:
    return results.floors.summary(key).median


@attrs.frozen(kw_only=True)
class Goal:
    """``agent``'s median of ``key`` against ``limit`` (None: not measurable in this run)."""

    text: str
    agent: str
    key: str
    limit: Callable[[StartupResults], float | None]
    strict: bool = False

    def verdict(self, results: StartupResults) -> tuple[str, str]:
        limit = self.limit(results)
        value = median(results, self.agent, self.key) if self.agent else floor(results, self.key)
        if limit is None or value is None:
            return f"{self.text}: –", "not measured"
        met = value < limit if self.strict else value <= limit
        return f"{self.text} = {number(limit)}", "met" if met else "not met"


def _plus(key: str, extra: float, scale: float = 1.0) -> Callable[[StartupResults], float | None]:
    def limit(results: StartupResults) -> float | None:
        value = floor(results, key)
        return None if value is None else (value + extra) * scale

    return limit


GOALS = (
    Goal(text="cold: spawn → first request ≤ import anthropic + 250 ms", agent="cold",
         key="first_ms", limit=_plus("import.anthropic_ms", 250)),
    Goal(text="cold: whole run ≤ import anthropic + 500 ms (s)", agent="cold", key="wall_s",
         limit=_plus("import.anthropic_ms", 500, 1 / 1000)),
    Goal(text="cold: last answer → exit ≤ 50 ms", agent="cold", key="exit_ms",
         limit=lambda _: 50.0),
    Goal(text="warm: spawn → first request ≤ 150 ms", agent="warm", key="first_ms",
         limit=lambda _: 150.0),
    Goal(text="warm: whole run < Claude Code's (s)", agent="warm", key="wall_s",
         limit=lambda r: median(r, "claude", "wall_s"), strict=True),
    Goal(text="warm: last answer → exit ≤ 50 ms", agent="warm", key="exit_ms",
         limit=lambda _: 50.0),
    Goal(text="`serve`: spawn → `initialize` answered ≤ bare pygls + 150 ms", agent="",
         key="serve.spawn_ms", limit=_plus("pygls_init_ms", 150)),
)  # fmt: skip

ROWS = (
    ("whole run, spawn → exit", "wall_s", "s"),
    ("spawn → first model request", "first_ms", "ms"),
    ("last answer → exit", "exit_ms", "ms"),
    ("agent's time per step (answer → next request)", "step_ms", "ms"),
    ("peak RSS", "rss_mib", "MiB"),
)

FLOORS = (
    ("interpreter importing `anthropic`, spawn → exit (the SDK-import floor)",
     "import.anthropic_ms"),
    ("bare interpreter (`python -c pass`)", "python_ms"),
    ("bare pygls server: spawn → `initialize` answered", "pygls_init_ms"),
    ("`lsp-agent serve`: spawn → `initialize` answered", "serve.spawn_ms"),
)  # fmt: skip


def _cell(results: StartupResults, agent: str, key: str, unit: str) -> str:
    summary = results.agents[agent].summary(key)
    if summary.n == 0:
        return "–"
    return (
        f"{number(summary.median, unit)} ({number(summary.min, unit)}–{number(summary.max, unit)})"
    )


def table(results: StartupResults) -> list[str]:
    head = " | ".join(name for _, name in COLUMNS)
    lines = [f"| median (min–max) | {head} |", "|---|" + "---|" * len(COLUMNS)]
    for label, key, unit in ROWS:
        cells = " | ".join(_cell(results, agent, key, unit) for agent, _ in COLUMNS)
        lines.append(f"| {label}, {unit} | {cells} |")
    return lines


def section(results: StartupResults, command: str, chart: str | None) -> str:
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    s = results.settings
    lines = [
        START,
        f"Produced by `{command}` on {when}: {s['runs']} counted runs of each after "
        f"{s['warmup']} warm-up, alternating. Warm: `lsp-agent run` through the warm process "
        "(its peak RSS is the `run` process's; the warm process is shared). Cold: "
        "`run` in its own process (`LSP_AGENT_NO_DAEMON=1`).",
        "",
        f"Machine: {machine()}.",
        "",
        *table(results),
        "",
        "| Floor, same run | median ms (min–max) |",
        "|---|---|",
    ]
    for label, key in FLOORS:
        summary = results.floors.summary(key)
        spread = f"{number(summary.min)}–{number(summary.max)}" if summary.n else "–"
        lines.append(f"| {label} | {number(summary.median)} ({spread}) |")
    lines += ["", "| Goal | verdict |", "|---|---|"]
    lines += [f"| {text} | {verdict} |" for text, verdict in (g.verdict(results) for g in GOALS)]
    lines.append("")
    lines += [f"- {note}" for note in results.notes]
    if chart is not None:
        lines += ["", f"![start and stop beside Claude Code and opencode]({chart})"]
    else:
        lines += ["", "- no chart: matplotlib is not installed (`pip install -e '.[bench]'`)"]
    lines += ["", END]
    return "\n".join(lines)


def write_chart(results: StartupResults, path: Path) -> bool:
    """Per agent, one stacked bar of the whole run: spawn → first request, the steps, last
    answer → exit; the floor as a line. False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    shown = [(a, n) for a, n in COLUMNS if median(results, a, "wall_s") is not None]
    fig, ax = plt.subplots(figsize=(9, 0.6 * len(shown) + 1.6))
    for y, (agent, _) in enumerate(shown):
        whole = (median(results, agent, "wall_s") or 0) * 1000
        first = median(results, agent, "first_ms") or 0
        tail = median(results, agent, "exit_ms") or 0
        middle = max(0.0, whole - first - tail)
        parts = (("spawn → first request", first, "#3b7dd8"),
                 ("the three steps", middle, "#9bbf5a"),
                 ("last answer → exit", tail, "#d8833b"))  # fmt: skip
        left = 0.0
        for label, width, colour in parts:
            ax.barh(y, width, left=left, color=colour, label=label if y == 0 else None)
            left += width
    sdk = floor(results, "import.anthropic_ms")
    if sdk is not None:
        ax.axvline(sdk, color="black", linestyle=":", label="import anthropic (floor)")
    ax.set_yticks(range(len(shown)), [name for _, name in shown])
    ax.invert_yaxis()
    ax.set_xlabel("milliseconds (medians)")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write(results: StartupResults, out: Path, command: str) -> Path:
    """Rewrite the startup section of ``out``/benchmarks.md (and its chart)."""
    out.mkdir(parents=True, exist_ok=True)
    chart = out / "benchmarks-startup.png"
    body = section(results, command, chart.name if write_chart(results, chart) else None)
    return replace_section(out / "benchmarks.md", body, START, END)
