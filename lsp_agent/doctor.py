"""``lsp-agent doctor``: what is installed and configured, what is missing.

Each check prints one line: ``ok``, ``warn`` or ``FAIL``. Exit 0 when nothing failed (a
missing API key is only a warning: it names the variable, never a value), 1 otherwise.

The model's endpoint is shown with the setting it came from and tested with one cheap
request (``GET …/models``, :data:`PROBE_TIMEOUT` seconds): refused, name not resolved, timed
out or an invalid URL fail; an answer is reported with its HTTP status. The key is sent as
the provider would send it, and never printed.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TextIO

import attrs

from lsp_agent.app import AgentInputs, key_variables
from lsp_agent.auth.keys import ProviderKeys
from lsp_agent.core.errors import ConfigError
from lsp_agent.display import block
from lsp_agent.system.programs import find_program, find_rg, probe, trusted_search_path

if TYPE_CHECKING:
    from lsp_agent.config.resolve import ResolvedModel
    from lsp_agent.config.settings import Settings
    from lsp_agent.sandbox import Availability, SandboxMode
    from lsp_agent.storage.recovery import RecoveryReport

PROBE_TIMEOUT = 5.0

Level = Literal["ok", "warn", "FAIL"]


@attrs.frozen
class Check:
    level: Level
    name: str
    detail: str


async def run_doctor(*, env: Mapping[str, str], cwd: Path, out: TextIO) -> int:
    path = env.get("PATH", os.defpath)
    avoid = (str(cwd),)
    checks = [
        _python(),
        _program("git", find_program("git", path=path, avoid=avoid), path, avoid),
        _program("rg", find_rg(path=path, avoid=avoid), path, avoid),
    ]
    checks += await _data_dir(env)
    config_checks, settings, model = _configuration(AgentInputs(workspace=cwd, env=env))
    checks += config_checks
    if model is not None:
        checks.append(await _endpoint(model, env))
    checks += _skills(env, cwd)
    if settings is not None:
        checks += await _mcp_servers(settings, env, cwd)
    # A broken config was reported above; the sandbox is then checked as by default.
    mode = settings.sandbox.mode if settings else "auto"
    found = None if mode == "off" else await _try_bubblewrap(env, avoid)
    checks.append(_sandbox(found, mode))
    if settings is not None:
        checks.append(await _limits(found, settings))
    for check in checks:
        # Details quote files and servers (a skill's name, a provider's answer): escaped.
        out.write(f"{check.level:<4}  {check.name}: {block(check.detail)}\n")
    return 1 if any(c.level == "FAIL" for c in checks) else 0


async def _try_bubblewrap(env: Mapping[str, str], avoid: Sequence[str]) -> Availability:
    """Bubblewrap tried once for both checks, taken from outside ``avoid`` (the workspace:
    a ``bwrap`` planted there is never run)."""
    import asyncio

    from lsp_agent.sandbox import check_availability

    return await asyncio.to_thread(check_availability, env, avoid)


def _sandbox(found: Availability | None, mode: SandboxMode) -> Check:
    """Whether bash commands run in the bubblewrap sandbox here (``found`` None: it is off);
    FAIL when it is required and does not work (``bash`` would refuse every command)."""
    if found is None:
        return Check("ok", "sandbox", "off (sandbox.mode); commands run unconfined")
    if found.works:
        return Check("ok", "sandbox", f"bubblewrap works: {found.reason}")
    if mode == "required":
        return Check("FAIL", "sandbox", f"required but {found.reason}; bash refuses commands")
    return Check("warn", "sandbox", found.reason)


async def _limits(found: Availability | None, settings: Settings) -> Check:
    """How ``sandbox.limits`` holds here: which bound limits the processes (a ``pids``
    cgroup, ``RLIMIT_NPROC``, or only the watch as root without a cgroup), and whether this
    bubblewrap (``found``; None: the sandbox is off) can size the in-memory folders."""
    import asyncio
    import os

    from lsp_agent.sandbox import CommandLimits
    from lsp_agent.sandbox.cgroup import find_pids_hierarchy

    limits = CommandLimits.configured(**settings.sandbox.limits.model_dump())
    level: Level = "ok"
    parts = []
    if limits.processes is None:
        parts.append("processes not bounded")
    elif await asyncio.to_thread(find_pids_hierarchy) is not None:
        parts.append(f"processes ≤ {limits.processes} (a pids cgroup per command)")
    elif os.geteuid() == 0:
        level = "warn"
        parts.append(
            f"processes ≤ {limits.processes} only by stopping the command (root is exempt "
            "from RLIMIT_NPROC and no pids cgroup can be made here)"
        )
    else:
        parts.append(f"processes ≤ {limits.processes} (RLIMIT_NPROC)")
    memory = limits.memory_mb
    parts.append(f"memory {memory} MB per process" if memory else "memory not bounded")
    if found is not None and limits.tmp_mb is not None:
        if found.works and not found.sizes:
            level = "warn"
            parts.append("in-memory folders not bounded (this bubblewrap takes no --size)")
        elif found.works:
            parts.append(f"in-memory folders {limits.tmp_mb} MB each")
    output = limits.output_mb
    parts.append(f"output {output} MB" if output else "output not bounded")
    return Check(level, "limits", "; ".join(parts))


def _skills(env: Mapping[str, str], cwd: Path) -> list[Check]:
    from lsp_agent.config.load import user_config_file
    from lsp_agent.skills.catalog import discover_skills

    catalog = discover_skills([str(cwd)], str(user_config_file(env).parent))
    checks = [Check("warn", "skill", str(problem)) for problem in catalog.problems]
    if catalog.skills:
        checks.append(Check("ok", "skills", ", ".join(catalog.names)))
    return checks


async def _mcp_servers(settings: Settings, env: Mapping[str, str], cwd: Path) -> list[Check]:
    """Every configured MCP server started once, as a session would (each bounded by its
    ``timeout_ms``): up with its tool count, disabled, or the error. A failed server is a
    warning: sessions run without its tools."""
    if not settings.mcp:
        return []
    from lsp_agent.mcp.manager import McpManager  # the SDK loads only when servers are set

    manager = McpManager(
        settings.mcp, env=env, hidden_env=key_variables(settings), avoid=(str(cwd),)
    )
    manager.start()
    try:
        await manager.settled()
        statuses = manager.statuses()
    finally:
        await manager.aclose()
    checks = []
    for server in statuses:
        name = f"mcp {server.name}"
        if server.status == "connected":
            count = len(server.tools)
            checks.append(Check("ok", name, f"started; {count} tool{'s' if count != 1 else ''}"))
        elif server.status == "disabled":
            checks.append(Check("ok", name, "disabled (enabled: false); not started"))
        else:
            checks.append(Check("warn", name, f"not started: {server.error}"))
    return checks


def _python() -> Check:
    version = ".".join(map(str, sys.version_info[:3]))
    level: Level = "ok" if sys.version_info >= (3, 11) else "FAIL"
    return Check(level, "python", f"{version} (3.11 or newer needed)")


def _program(name: str, path: str | None, search: str, avoid: Sequence[str]) -> Check:
    """``path --version``, run with only ``PATH`` (trusted entries) and ``LC_ALL``: helper
    programs never see our keys."""
    if path is None:
        return Check("FAIL", name, "not found outside the current folder")
    env = {"PATH": os.pathsep.join(trusted_search_path(search, avoid)), "LC_ALL": "C"}
    done = probe([path, "--version"], env, timeout=10)
    if isinstance(done, Exception):
        return Check("FAIL", name, f"{path} does not run: {done}")
    first = done.stdout.splitlines()
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
    checks = [Check("ok", "data dir", f"{folder} (sessions live in {folder / 'lsp-agent.db'})")]
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


def _configuration(
    inputs: AgentInputs,
) -> tuple[list[Check], Settings | None, ResolvedModel | None]:
    """The config and model checks — the steps ``load_agent`` takes before it builds the
    agent — with the settings and the model as far as they load (the endpoint is next)."""
    env = inputs.env
    try:
        settings = inputs.settings()
    except ConfigError as error:
        return [Check("FAIL", "config", str(error))], None, None
    sources = ", ".join(settings.sources) or "built-in defaults only"
    checks = [Check("ok", "config", sources)]
    checks += [Check("warn", "config", warning) for warning in settings.warnings]
    try:
        model = inputs.model(settings)
    except ConfigError as error:
        return [*checks, Check("FAIL", "model", str(error))], settings, None
    # Which layer set it: a file's path, LSP_AGENT_MODEL, initializationOptions.
    checks.append(Check("ok", "model", f"{model.info.ref} (from {settings.origin('model')})"))
    from lsp_agent.config.resolve import check_agent_models, ignored_settings

    try:
        check_agent_models(settings)
    except ConfigError as error:
        checks.append(Check("FAIL", "agents", str(error)))
    checks += [Check("warn", "config", warning) for warning in ignored_settings(settings)]
    if model.api_key_env is None:
        checks.append(Check("ok", "api key", "none needed"))
    else:
        source = ProviderKeys(env).source(model.info.provider, model.api_key_env)
        if source == "env":
            checks.append(Check("ok", "api key", f"{model.api_key_env} is set"))
        elif source == "keyring":
            checks.append(Check("ok", "api key", "from the keyring (lsp-agent auth set)"))
        else:
            checks.append(Check("warn", "api key", f"{model.api_key_env} is not set"))
    return checks, settings, model


async def _endpoint(model: ResolvedModel, env: Mapping[str, str]) -> Check:
    """Show where requests go (and what set it), and try one cheap request there."""
    import httpx2

    from lsp_agent.config.resolve import BASE_URL_ENV
    from lsp_agent.providers.errors import connection_cause, describe_endpoint

    anthropic = model.provider_type == "anthropic"
    default = "https://api.anthropic.com" if anthropic else "https://api.openai.com/v1"
    endpoint = describe_endpoint(
        model.base_url,
        default=default,
        env=env,
        env_var=BASE_URL_ENV[model.provider_type],
        provider=model.info.provider,
    )
    key = (
        ProviderKeys(env).key(model.info.provider, model.api_key_env) if model.api_key_env else None
    )
    if model.api_key_env and not key:
        return Check("warn", "endpoint", f"{endpoint.described}; not tested without a key")
    url = endpoint.url.rstrip("/") + ("/v1/models" if anthropic else "/models")
    headers = {}
    if key and anthropic:
        headers = {"x-api-key": key, "anthropic-version": "2023-06-01"}
    elif key:
        headers = {"authorization": f"Bearer {key}"}
    try:
        async with httpx2.AsyncClient(timeout=PROBE_TIMEOUT) as client:
            response = await client.get(url, headers=headers)
    except (httpx2.HTTPError, OSError, ValueError) as error:
        cause = connection_cause(error)
        if key:
            cause = cause.replace(key, "[redacted]")
        return Check("FAIL", "endpoint", f"{endpoint.described}: {cause}")
    status = response.status_code
    if status < 400:
        return Check("ok", "endpoint", f"{endpoint.described}: reachable (HTTP {status})")
    if status in (401, 403):
        hint = f"; check {model.api_key_env}" if model.api_key_env else ""
        return Check(
            "FAIL", "endpoint", f"{endpoint.described}: the key was refused (HTTP {status}){hint}"
        )
    return Check(
        "warn", "endpoint", f"{endpoint.described}: reachable, but GET {url} answered HTTP {status}"
    )
