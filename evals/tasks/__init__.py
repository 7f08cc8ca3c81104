"""Every task, in the order they run and are reported."""

from __future__ import annotations

from evals.task import Task
from evals.tasks import (
    conventions,
    diagnostics,
    feature,
    fix,
    implement,
    permissions,
    questions,
    rename,
    safety,
)

TASKS: tuple[Task, ...] = (
    *fix.TASKS,
    *implement.TASKS,
    *rename.TASKS,
    *diagnostics.TASKS,
    *conventions.TASKS,
    *feature.TASKS,
    *questions.TASKS,
    *safety.TASKS,
    *permissions.TASKS,
)
