"""``lsp-agent doctor``: what is installed and configured, what is missing.

Each check prints one line: ``ok``, ``warn`` or ``FAIL``. Exit 0 when nothing failed (a
missing API key is only a warning: it names the variable, never a value), 1 otherwise.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TextIO

import attrs

from lsp_agent.core.errors import ConfigError
from lsp_agent.tools.ripgrep import find_rg

if TYPE_CHECKING:
    from lsp_agent.recovery import RecoveryReport

Level = Literal["ok", "warn", "FAIL"]


@attrs.frozen
class Check:
    level: Level
    name: str
    detail: str


async def run_doctor(*, env: Mapping[str, str], cwd: Path, out: TextIO) -> int:
    checks = [_python(), _program("git", shutil.which("git")), _program("rg", find_rg())]
    checks += await _data_dir(env)
    checks += _configuration(env, cwd)
    checks += _skills(env, cwd)
    for check in checks:
        out.write(f"{check.level:<4}  {check.name}: {check.detail}\n")
    return 1 if any(c.level == "FAIL" for c in checks) else 0


def _skills(env: Mapping[str, str], cwd: Path) -> list[Check]:
    from lsp_agent.settings import user_config_file
    from lsp_agent.tools.skills import discover_skills

    catalog = discover_skills([str(cwd)], str(user_config_file(env).parent))
    checks = [Check("warn", "skill", str(problem)) for problem in catalog.problems]
    if catalog.skills:
        checks.append(Check("ok", "skills", ", ".join(catalog.names)))
    return checks


def _python() -> Check:
    version = ".".join(map(str, sys.version_info[:3]))
    level: Level = "ok" if sys.version_info >= (3, 11) else "FAIL"
    return Check(level, "python", f"{version} (3.11 or newer needed)")


def _program(name: str, path: str | None) -> Check:
    if path is None:
        return Check("FAIL", name, "not found")
    try:
        first = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=10, check=False
        ).stdout.splitlines()
    except (OSError, subprocess.TimeoutExpired) as error:
        return Check("FAIL", name, f"{path} does not run: {error}")
    return Check("ok", name, f"{first[0] if first else 'unknown version'} ({path})")


async def _data_dir(env: Mapping[str, str]) -> list[Check]:
    from lsp_agent.app import data_dir, open_and_recover

    folder = data_dir(env)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder):
            pass
    except OSError as error:
        return [Check("FAIL", "data dir", f"{folder} is not writable: {error}")]
    checks = [Check("ok", "data dir", str(folder))]
    try:
        store, report = await open_and_recover(env)
        moved = store.moved_aside
        await store.close()
        with sqlite3.connect(folder / "lsp-agent.db") as conn:
            verdict = conn.execute("PRAGMA integrity_check").fetchone()[0]
    except Exception as error:  # any failure to open is what this check reports
        return [*checks, Check("FAIL", "database", f"does not open: {error}")]
    if moved is not None:
        checks.append(
            Check(
                "FAIL",
                "database",
                f"was corrupt ({moved.reason}); moved aside to {moved.moved_to},"
                " a fresh one was created",
            )
        )
    level: Level = "ok" if verdict == "ok" else "FAIL"
    checks.append(Check(level, "database", f"migrated; integrity {verdict}"))
    return [*checks, _recovery(report)]


def _recovery(report: RecoveryReport) -> Check:
    if report.failed:
        return Check("FAIL", "recovery", f"could not recover sessions {', '.join(report.failed)}")
    if not report.recovered:
        return Check("ok", "recovery", "no interrupted turns")
    sessions = ", ".join(turn.session_id for turn in report.recovered)
    killed = sum(len(turn.killed) for turn in report.recovered)
    leftovers = f"; stopped {killed} leftover processes" if killed else ""
    return Check(
        "ok",
        "recovery",
        f"closed {len(report.recovered)} turns whose process had died ({sessions}){leftovers}",
    )


def _configuration(env: Mapping[str, str], cwd: Path) -> list[Check]:
    from lsp_agent.settings import load_settings, resolve_model

    try:
        settings = load_settings(workspace=cwd, env=env)
    except ConfigError as error:
        return [Check("FAIL", "config", str(error))]
    sources = ", ".join(settings.sources) or "built-in defaults only"
    checks = [Check("ok", "config", sources)]
    try:
        model = resolve_model(settings)
    except ConfigError as error:
        return [*checks, Check("FAIL", "model", str(error))]
    checks.append(Check("ok", "model", model.info.ref))
    if model.api_key_env is None:
        checks.append(Check("ok", "api key", "none needed"))
    elif env.get(model.api_key_env):
        checks.append(Check("ok", "api key", f"{model.api_key_env} is set"))
    else:
        checks.append(Check("warn", "api key", f"{model.api_key_env} is not set"))
    return checks
