"""The long-session part of docs/benchmarks.md and its chart, from one ``--long`` run."""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from pathlib import Path

from bench.long import Session
from bench.report import machine, number, replace_section

START, END = "<!-- bench-long:start -->", "<!-- bench-long:end -->"
GOAL_GROWTH = 1.5
GOAL_RSS_MIB = 100.0
GOAL_STEPS = 800


def _verdict(session: Session) -> str:
    """Judged on the medians, then on the lower quartiles."""
    if session.steps < GOAL_STEPS:
        return "–"
    verdicts = ("met" if session.growth(q) <= GOAL_GROWTH else "not met" for q in (0.5, 0.25))
    return " / ".join(verdicts)


def table(sessions: Sequence[Session]) -> list[str]:
    lines = [
        "| agent | path | steps | first tenth (ms) | last tenth (ms) | growth | "
        "lower quartiles: first → last (ms), growth | "
        "floor: first → last (ms; encode) | growth net of floor | request KB first → last | "
        "peak RSS (MiB) | "
        f"≤ {GOAL_GROWTH}× from {GOAL_STEPS} steps (medians / lower quartiles) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in sessions:
        tenths, low = s.tenths(), s.tenths(0.25)
        net = s.net_growth()
        lines.append(
            f"| {s.agent} | `{s.path}` | {s.steps:,} | {number(tenths[0])} | "
            f"{number(tenths[-1])} | {s.growth():.2f}× | {number(low[0])} → {number(low[-1])}, "
            f"{s.growth(0.25):.2f}× | {number(s.floor_first.send_ms)} → "
            f"{number(s.floor_last.send_ms)} ({number(s.floor_first.encode_ms)} → "
            f"{number(s.floor_last.encode_ms)}) | {'–' if net is None else f'{net:.2f}×'} | "
            f"{s.body_bytes[1] / 1024:.0f} → {s.body_bytes[-1] / 1024:.0f} | "
            f"{number(s.peak_rss_mib)} | {_verdict(s)} |"
        )
    return lines


def section(sessions: Sequence[Session], command: str, chart: str | None) -> str:
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    agents = sorted({s.agent for s in sessions})
    rss = {a: max(s.peak_rss_mib for s in sessions if s.path == "run" and s.agent == a)
           for a in agents if any(s.path == "run" and s.agent == a for s in sessions)}  # fmt: skip
    lines = [
        START,
        f"Produced by `{command}` on {when}.",
        "",
        f"Machine: {machine()}.",
        "",
        *table(sessions),
        "",
        "- peak RSS of `run` over every size: "
        + ", ".join(f"{a} {number(r)} MiB" for a, r in rss.items())
        + f" (goal ≤ {GOAL_RSS_MIB:.0f} MiB)",
    ]
    if chart is not None:
        lines += ["", f"![overhead per step along long sessions]({chart})"]
    else:
        lines += ["", "- no chart: matplotlib is not installed (`pip install -e '.[bench]'`)"]
    lines += ["", END]
    return "\n".join(lines)


def write_chart(sessions: Sequence[Session], path: Path) -> bool:
    """Per path, the median overhead of each tenth against the step it stands for, one curve
    per session size, with the floor of the largest (dashed); False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    paths = sorted({s.path for s in sessions})
    fig, axes = plt.subplots(1, len(paths), figsize=(5.5 * len(paths), 4), squeeze=False)
    for ax, name in zip(axes[0], paths, strict=True):
        mine = [s for s in sessions if s.path == name]
        for s in mine:
            tenths = s.tenths()
            xs = [(k + 0.5) * s.steps / len(tenths) for k in range(len(tenths))]
            style = "--" if s.agent == "before" else "-"
            ax.plot(xs, tenths, marker="o", markersize=3, linestyle=style,
                    label=f"{s.agent}, {s.steps:,} steps")  # fmt: skip
        if mine:
            big = max(mine, key=lambda s: s.steps)
            ax.plot([big.steps * 0.05, big.steps * 0.95],
                    [big.floor_first.send_ms, big.floor_last.send_ms],
                    color="grey", linestyle=":", label="floor: encode + SDK send")  # fmt: skip
        ax.set_title(f"lsp-agent {name}")
        ax.set_xlabel("step")
        ax.set_ylabel("agent overhead per step, ms (median of each tenth)")
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write(sessions: Sequence[Session], out: Path, command: str) -> Path:
    """Rewrite the long-session section of ``out``/benchmarks.md (and its chart)."""
    out.mkdir(parents=True, exist_ok=True)
    chart = out / "benchmarks-long.png"
    body = section(sessions, command, chart.name if write_chart(sessions, chart) else None)
    return replace_section(out / "benchmarks.md", body, START, END)
