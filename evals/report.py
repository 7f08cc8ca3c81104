"""The results as JSON (``results.json``), a Markdown table (``results.md``) and, with the
``bench`` extra's matplotlib, a chart (``results.png``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from evals.suite import Result


def table(results: Sequence[Result]) -> str:
    head = [
        "| task | front | solved | steps | input | output | cached | cost | wall s |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    rows = [
        f"| {r.task} | {r.front} | {'yes' if r.solved else 'no'} | {r.steps} | "
        f"{r.input_tokens:,} | {r.output_tokens:,} | {r.cached_tokens:,} | "
        f"{_cost(r.cost)} | {r.wall_s:.1f} |"
        for r in results
    ]
    return "\n".join([*head, *rows])


def _cost(cost: float | None) -> str:
    return "–" if cost is None else f"${cost:.4f}"


def summary(results: Sequence[Result]) -> str:
    solved = sum(r.solved for r in results)
    costs = [r.cost for r in results if r.cost is not None]
    total = f", ${sum(costs):.4f} in all" if costs else ""
    return f"{solved}/{len(results)} solved{total}"


def markdown(results: Sequence[Result], command: str, chart: str | None) -> str:
    models = sorted({r.model for r in results})
    lines = [
        "# Evals",
        "",
        f"`{command}` — model {', '.join(f'`{m}`' for m in models)}: {summary(results)}.",
        "",
        table(results),
        "",
    ]
    failed = [r for r in results if not r.solved]
    if failed:
        lines += ["## Not solved", ""]
        lines += [f"- {r.task} ({r.front}): {r.reason}" for r in failed]
        lines.append("")
    if chart is not None:
        lines += [f"![tokens and time per task]({chart})", ""]
    else:
        lines += ["No chart: matplotlib is not installed (`pip install -e '.[bench]'`).", ""]
    return "\n".join(lines)


def write_chart(results: Sequence[Result], path: Path) -> bool:
    """Per task: total tokens and wall time, solved tasks in one colour and the rest in
    another; False when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    labels = [f"{r.task} ({r.front})" for r in results]
    colours = ["#3b7dd8" if r.solved else "#d8833b" for r in results]
    ys = list(range(len(results)))
    fig, (tokens, wall) = plt.subplots(1, 2, sharey=True, figsize=(11, 0.32 * len(results) + 1.5))
    tokens.barh(ys, [r.input_tokens + r.output_tokens + r.cached_tokens for r in results],
                color=colours)  # fmt: skip
    tokens.set_xlabel("tokens (input + output + cached)")
    wall.barh(ys, [r.wall_s for r in results], color=colours)
    wall.set_xlabel("wall time, s")
    tokens.set_yticks(ys, labels, fontsize=7)
    tokens.invert_yaxis()
    fig.suptitle("blue: solved, orange: not solved", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write(results: Sequence[Result], out: Path, command: str) -> Path:
    """``results.json``, ``results.md`` and ``results.png`` in ``out``; the Markdown's path."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(
        json.dumps(
            {"command": command, "summary": summary(results),
             "results": [r.to_json() for r in results]},
            indent=1,
        ) + "\n"
    )  # fmt: skip
    chart = out / "results.png"
    has_chart = write_chart(results, chart)
    doc = out / "results.md"
    doc.write_text(markdown(results, command, chart.name if has_chart else None))
    return doc
