"""Loading the settings: the one module that reads configuration files and environment
variables.

Layers, merged in this order (later wins)::

    built-in defaults
    < LSP_AGENT_MODEL                        (sets ``model`` only)
    < <user config dir>/lsp-agent/config.json (the user file)
    < <workspace>/.lsp-agent.json             (the project file; untrusted unless listed)
    < initializationOptions.agent.workspaceConfig (a workspace's editor settings; untrusted
                                                  like the project file)
    < the file named by LSP_AGENT_CONFIG      (never a file in a workspace folder)
    < initializationOptions.agent.config      (the editor)
    < command-line flags

Objects merge per key, arrays replace, ``null`` means "not set by this layer", and each
layer's permission rules are appended after the earlier layers' (last match wins), except
that the project file's and the editor's rules never lift a deny of the user's own layers.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

import attrs
from pydantic import (
    ValidationError,
)

from lsp_agent.config.locations import (
    expand_home,
    extra_config_file,
    home_of,
    project_config_file,
    user_config_file,
)
from lsp_agent.config.resolve import BASE_URL_ENV, BUILTIN_PROVIDERS
from lsp_agent.config.settings import (
    ACTIONS,
    BUILTIN_SOURCE,
    CLI_SOURCE,
    CONFIG_ENV,
    DEFAULT_PERMISSION_RULES,
    INIT_OPTIONS_SOURCE,
    MODEL_ENV,
    WORKSPACE_OPTIONS_SOURCE,
    Action,
    ConfigKeys,
    InvalidConfig,
    PermissionRule,
    SandboxLimits,
    Settings,
    check_permission_name,
    sandbox_shorthand,
)
from lsp_agent.core.modes import DEFAULT_MODE, loosens
from lsp_agent.core.permission.rules import literal

__all__ = [
    "extra_config_file",
    "load_settings",
    "load_settings_from_environment",
    "project_config_file",
    "user_config_file",
]


# ---------------------------------------------------------------------------------------------
# Locations


def _refuse_in_workspace(path: Path, folders: Iterable[Path]) -> None:
    """``LSP_AGENT_CONFIG`` is a trusted layer: a file in a workspace folder is the
    project's (the model can write it), so it is refused, as named or where it leads."""
    spellings = {os.path.normcase(os.path.abspath(path)), _canonical(str(path))}
    for folder in folders:
        for root in {os.path.normcase(os.path.abspath(folder)), _canonical(str(folder))}:
            if any(_inside(spelling, root) for spelling in spellings):
                raise InvalidConfig(
                    str(path),
                    f"{CONFIG_ENV} names a file inside the workspace folder {folder}: a "
                    "file there is the project's, not yours; move it out of the workspace "
                    "(or use the project file .lsp-agent.json)",
                )


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _canonical(path: str) -> str:
    return os.path.normcase(os.path.realpath(path))


# ---------------------------------------------------------------------------------------------
# Loading

_LayerKind = Literal["env", "user", "project", "extra", "editor", "editor_workspace", "cli"]
_BELOW_USER: frozenset[_LayerKind] = frozenset({"project", "editor_workspace", "editor"})
"""Layers whose permission rules may tighten but never lift a deny of the user's own."""
_UNTRUSTED: frozenset[_LayerKind] = frozenset({"project", "editor_workspace"})
"""Layers the project controls: checked as untrusted unless the folder is trusted."""


@attrs.define
class _Layer:
    kind: _LayerKind
    source: str
    data: dict[str, Any]
    rules: list[PermissionRule] = attrs.field(factory=list)


def _strip_nulls(value: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, item in value.items():
        if item is None:
            continue
        out[key] = _strip_nulls(item) if isinstance(item, Mapping) else item
    return out


def _merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, item in over.items():
        below = out.get(key)
        if isinstance(item, Mapping) and isinstance(below, Mapping):
            out[key] = _merge(below, item)
        else:
            out[key] = item
    return out


def _read_json(path: Path) -> dict[str, Any]:
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise InvalidConfig(source, "not UTF-8 text") from None
    except OSError as exc:
        raise InvalidConfig(source, f"cannot read: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidConfig(
            source, f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None
    if not isinstance(data, dict):
        raise InvalidConfig(source, "expected a JSON object at the top level")
    return data


def _key(loc: Iterable[int | str]) -> str:
    return ".".join(str(part) for part in loc)


def _validation_error(source: str, exc: ValidationError) -> InvalidConfig:
    reasons: list[str] = []
    first_key: str | None = None
    for error in exc.errors(include_url=False, include_input=False, include_context=False):
        key = _key(error["loc"])
        first_key = first_key or key
        if error["type"] == "extra_forbidden":
            reasons.append(f"unknown key {key!r}")
        else:
            message = error["msg"].removeprefix("Value error, ")
            reasons.append(f"key {key!r}: {message}")
    return InvalidConfig(source, "; ".join(reasons), key=first_key)


def _action(value: object, source: str, key: str) -> Action:
    for action in ACTIONS:
        if value == action:
            return action
    raise InvalidConfig(source, f"key {key!r}: expected 'allow', 'ask' or 'deny'", key=key)


def _parse_permission(value: object, source: str, home: str) -> list[tuple[str, PermissionRule]]:
    """``permission`` → [(dotted key, rule)] in the order written."""
    if isinstance(value, str):
        action = _action(value, source, "permission")
        return [
            (
                "permission",
                PermissionRule(permission="*", pattern="*", action=action, source=source),
            )
        ]
    if not isinstance(value, Mapping):
        raise InvalidConfig(
            source,
            "key 'permission': expected an action ('allow', 'ask', 'deny') or an object",
            key="permission",
        )
    rules: list[tuple[str, PermissionRule]] = []
    for name, entry in value.items():
        key = f"permission.{name}"
        if not isinstance(name, str) or not name.strip():
            raise InvalidConfig(source, f"key {key!r}: empty permission name", key=key)
        check_permission_name(name, source, key)
        if isinstance(entry, Mapping):
            rules.extend(_pattern_rules(name, entry, key, source, home))
        elif isinstance(entry, list):  # ordered where the writer's maps have no order (Lua)
            for index, part in enumerate(entry):
                part_key = f"{key}.{index}"
                if not isinstance(part, Mapping):
                    raise InvalidConfig(
                        source,
                        f"key {part_key!r}: expected an object of pattern → action",
                        key=part_key,
                    )
                rules.extend(_pattern_rules(name, part, part_key, source, home))
        elif isinstance(entry, str):
            action = _action(entry, source, key)
            rules.append(
                (key, PermissionRule(permission=name, pattern="*", action=action, source=source))
            )
        else:
            raise InvalidConfig(
                source,
                f"key {key!r}: expected an action ('allow', 'ask', 'deny'), an object "
                "of pattern → action, or a list of such objects",
                key=key,
            )
    return rules


def _pattern_rules(
    name: str, entry: Mapping[object, object], key: str, source: str, home: str
) -> list[tuple[str, PermissionRule]]:
    """The rules of one object of ``pattern → action``, in its order."""
    rules: list[tuple[str, PermissionRule]] = []
    for pattern, raw_action in entry.items():
        rule_key = f"{key}.{pattern}"
        if not isinstance(pattern, str) or not pattern:
            raise InvalidConfig(source, f"key {rule_key!r}: empty pattern", key=rule_key)
        action = _action(raw_action, source, rule_key)
        rule = PermissionRule(
            permission=name, pattern=expand_home(pattern, home), action=action, source=source
        )
        rules.append((rule_key, rule))
    return rules


def _trusted_set(user: ConfigKeys, source: str, home: str) -> set[str]:
    trusted: set[str] = set()
    for index, entry in enumerate(user.trusted_folders):
        expanded = expand_home(entry, home)
        if not os.path.isabs(expanded):
            key = f"trusted_folders.{index}"
            raise InvalidConfig(
                source, f"key {key!r}: expected an absolute path or one starting with ~", key=key
            )
        trusted.add(_canonical(expanded))
    return trusted


def _check_untrusted_project(
    layer: _Layer,
    validated: ConfigKeys,
    keyed_rules: list[tuple[str, PermissionRule]],
    hint: str,
) -> None:
    """An untrusted project file may only tighten: raise on the first key that loosens."""

    def refuse(key: str, why: str) -> InvalidConfig:
        return InvalidConfig(layer.source, f"key {key!r}: {why} ({hint})", key=key)

    for key, rule in keyed_rules:
        if rule.action == "allow":
            raise refuse(key, "an untrusted project file may only add 'ask' or 'deny' rules")
    if "trusted_folders" in layer.data:
        raise refuse("trusted_folders", "only honoured in the user config file")
    for name, provider in validated.providers.items():
        for field in ("base_url", "api_key_env"):
            if getattr(provider, field) is not None:
                raise refuse(
                    f"providers.{name}.{field}", "not allowed in an untrusted project file"
                )
    if "mode" in layer.data.get("sandbox", {}) and validated.sandbox.mode != "required":
        raise refuse("sandbox.mode", "an untrusted project file may only set 'required'")
    if "allow_read" in layer.data.get("sandbox", {}):
        raise refuse("sandbox.allow_read", "not allowed in an untrusted project file")
    if validated.webfetch.allow_hosts:
        raise refuse("webfetch.allow_hosts", "not allowed in an untrusted project file")
    if validated.completion.enabled:  # every pause in typing would spend the user's tokens
        raise refuse("completion.enabled", "only your own settings may turn completion on")
    for index, entry in enumerate(validated.instructions):
        pure = Path(entry)
        if pure.is_absolute() or entry.startswith("~") or ".." in pure.parts:
            raise refuse(
                f"instructions.{index}",
                "an untrusted project file may only name files inside the project",
            )


def _check_limits_lowered(layer: _Layer, merged: Mapping[str, Any], hint: str) -> None:
    """An untrusted project file may lower ``sandbox.limits``, never raise one (``0``: not
    bounded, the loosest)."""
    sandbox = layer.data.get("sandbox")
    limits = sandbox.get("limits") if isinstance(sandbox, Mapping) else None
    if not isinstance(limits, Mapping):
        return
    below = SandboxLimits.model_validate(merged.get("sandbox", {}).get("limits", {}))
    for name, value in limits.items():
        current = getattr(below, name)
        if current != 0 and (value == 0 or value > current):
            key = f"sandbox.limits.{name}"
            raise InvalidConfig(
                layer.source,
                f"key {key!r}: an untrusted project file may only lower it (now {current}) "
                f"({hint})",
                key=key,
            )


def _restrict_mcp(layer: _Layer, *, trusted: bool, into: list[str]) -> None:
    """An untrusted project file starts no MCP server (it would run a program); only the
    user file may mark tools read-only (docs/mcp.md), and a server's own ``readOnlyHint``
    (the former ``allow_read_only``) is trusted nowhere."""
    servers = layer.data.get("mcp")
    if not isinstance(servers, dict) or not servers:
        return
    if not trusted:
        layer.data.pop("mcp")
        into.append(
            f"{layer.source}: 'mcp' is ignored: an untrusted project file starts no MCP server"
        )
        return
    for name, server in servers.items():
        if not isinstance(server, dict):
            continue
        if server.pop("allow_read_only", None) is not None:
            into.append(
                f"{layer.source}: 'mcp.{name}.allow_read_only' is no longer honoured (a "
                "server's readOnlyHint is not trusted): list its tools in "
                f"'mcp.{name}.read_only_tools' in the user config file"
            )
        if layer.kind != "user" and server.pop("read_only_tools", None) is not None:
            into.append(
                f"{layer.source}: 'mcp.{name}.read_only_tools' is ignored outside the user "
                "config file"
            )


def _read_only_rules(validated: ConfigKeys, source: str) -> list[PermissionRule]:
    """The user file's ``mcp.<server>.read_only_tools`` as allow rules for ``<server>:<tool>``
    (literal: a tool named ``get*`` covers no other tool), placed before the user's own
    rules, so those (and a project's) may still ask or deny them."""
    return [
        PermissionRule(
            permission="mcp",
            pattern=literal(f"{name}:{tool}"),
            action="allow",
            source=f"{source}: mcp.{name}.read_only_tools",
        )
        for name, server in validated.mcp.items()
        for tool in server.read_only_tools
    ]


def _has_key(data: Mapping[str, Any], path: tuple[str, ...]) -> bool:
    node: Any = data
    for part in path:
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return True


def _dotted_keys(data: Mapping[str, Any], prefix: str = "") -> Iterable[str]:
    """Every key of ``data`` as a dotted path, objects and what is inside them."""
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        yield dotted
        if isinstance(value, Mapping):
            yield from _dotted_keys(value, f"{dotted}.")


def _last_source(layers: list[_Layer], path: tuple[str, ...]) -> str:
    for layer in reversed(layers):
        if _has_key(layer.data, path):
            return layer.source
    return BUILTIN_SOURCE


def _check_providers(merged: ConfigKeys, layers: list[_Layer]) -> None:
    for name, provider in merged.providers.items():
        fixed = BUILTIN_PROVIDERS.get(name)
        if fixed is not None:
            if provider.type is not None and provider.type != fixed:
                key = f"providers.{name}.type"
                source = _last_source(layers, ("providers", name, "type"))
                raise InvalidConfig(
                    source, f"key {key!r}: the provider {name!r} is always {fixed!r}", key=key
                )
        elif provider.type is None:
            key = f"providers.{name}.type"
            source = _last_source(layers, ("providers", name))
            raise InvalidConfig(
                source,
                f"key {key!r}: required for a provider other than 'anthropic' and 'openai' "
                "(one of 'anthropic', 'openai', 'openai-compatible')",
                key=key,
            )


def _collect_layers(
    workspace: Path,
    env: Mapping[str, str],
    user_file: Path,
    cli_overrides: Mapping[str, Any] | None,
    init_options: Mapping[str, Any] | None,
    workspace_options: Mapping[str, Any] | None = None,
    folders: Iterable[Path] = (),
) -> tuple[list[_Layer], list[str]]:
    layers: list[_Layer] = []
    sources: list[str] = []
    model = env.get(MODEL_ENV, "").strip()
    if model:
        layers.append(_Layer("env", MODEL_ENV, {"model": model}))
    if user_file.exists():
        layers.append(_Layer("user", str(user_file), _read_json(user_file)))
        sources.append(str(user_file))
    project_file = project_config_file(workspace)
    if project_file.exists() and not (
        user_file.exists() and _canonical(str(project_file)) == _canonical(str(user_file))
    ):
        layers.append(_Layer("project", str(project_file), _read_json(project_file)))
        sources.append(str(project_file))
    if workspace_options is not None:
        if not isinstance(workspace_options, Mapping):
            raise InvalidConfig(WORKSPACE_OPTIONS_SOURCE, "expected an object")
        layers.append(_Layer("editor_workspace", WORKSPACE_OPTIONS_SOURCE, dict(workspace_options)))
    extra_file = extra_config_file(workspace, env)
    if extra_file is not None:
        _refuse_in_workspace(extra_file, [workspace, *folders])
        if not extra_file.exists():
            raise InvalidConfig(str(extra_file), f"file not found (named by {CONFIG_ENV})")
        layers.append(_Layer("extra", str(extra_file), _read_json(extra_file)))
        sources.append(str(extra_file))
    if init_options is not None:
        if not isinstance(init_options, Mapping):
            raise InvalidConfig(INIT_OPTIONS_SOURCE, "expected an object")
        layers.append(_Layer("editor", INIT_OPTIONS_SOURCE, dict(init_options)))
    if cli_overrides:
        flags = {key: value for key, value in cli_overrides.items() if value is not None}
        if flags:
            layers.append(_Layer("cli", CLI_SOURCE, flags))
    return layers, sources


def load_settings(
    *,
    workspace: Path,
    env: Mapping[str, str],
    cli_overrides: Mapping[str, Any] | None = None,
    init_options: Mapping[str, Any] | None = None,
    user_file: Path | None = None,
    workspace_options: Mapping[str, Any] | None = None,
    folders: Iterable[Path] = (),
) -> Settings:
    """Read and merge every layer (see the module docstring).

    ``env`` is the process environment (only ``LSP_AGENT_MODEL``, ``LSP_AGENT_CONFIG``,
    ``XDG_CONFIG_HOME``, ``HOME``, ``ANTHROPIC_BASE_URL`` and ``OPENAI_BASE_URL`` are looked
    at). ``init_options`` is the editor's ``initializationOptions.agent.config`` object;
    ``cli_overrides`` maps config keys to flag values (``None`` values are skipped, so
    argparse defaults can be passed as they are). ``user_file`` overrides the user config
    file's location (tests, ``doctor``). ``workspace_options``: the editor's
    ``initializationOptions.agent.workspaceConfig`` (settings a workspace set), merged right
    after the project file and, like it, untrusted unless the folder is. ``folders``: the
    other workspace folders (``LSP_AGENT_CONFIG`` may name a file in none of them).

    Raises :class:`InvalidConfig` naming the file (or layer) and the key.
    """
    home = home_of(env)
    if user_file is None:
        user_file = user_config_file(env)
    layers, sources = _collect_layers(
        workspace, env, user_file, cli_overrides, init_options, workspace_options, folders
    )

    warnings: list[str] = []
    trusted: set[str] = set()
    trusted_folders: list[str] = []
    workspace_real = _canonical(str(workspace))
    hint = f"add {os.path.realpath(workspace)} to trusted_folders in {user_file} to trust it"
    project_trusted = False
    merged: dict[str, Any] = {}
    origins: dict[str, str] = {}
    rules = list(DEFAULT_PERMISSION_RULES)
    read_only_mcp: list[str] = []
    users_mode = DEFAULT_MODE  # the mode the user's own layers chose

    for layer in layers:
        layer.data = _strip_nulls(layer.data)
        sandbox_shorthand(layer.data)
        permission = layer.data.pop("permission", None)
        # Before validation: a dropped key (allow_read_only) is a warning, not an error.
        _restrict_mcp(layer, trusted=layer.kind not in _UNTRUSTED or project_trusted, into=warnings)
        try:
            validated = ConfigKeys.model_validate(layer.data)
        except ValidationError as exc:
            raise _validation_error(layer.source, exc) from None
        keyed_rules = (
            _parse_permission(permission, layer.source, home) if permission is not None else []
        )
        if layer.kind == "user":
            trusted = _trusted_set(validated, layer.source, home)
            trusted_folders = list(validated.trusted_folders)
            project_trusted = workspace_real in trusted
        elif layer.kind in _UNTRUSTED and not project_trusted:
            _check_untrusted_project(layer, validated, keyed_rules, hint)
            _check_limits_lowered(layer, merged, hint)
        if layer.kind != "user" and "trusted_folders" in layer.data:
            warnings.append(
                f"{layer.source}: 'trusted_folders' is ignored outside the user config file"
            )
        layer.data.pop("trusted_folders", None)
        if "mode" in layer.data:
            if layer.kind in _BELOW_USER and loosens(validated.mode, users_mode):
                layer.data.pop("mode")
                warnings.append(
                    f"{layer.source}: 'mode' {validated.mode!r} is ignored: a layer below yours "
                    f"may not lift the limits of your {users_mode!r}"
                )
            elif layer.kind not in _BELOW_USER:
                users_mode = validated.mode
        layer.rules = [rule for _, rule in keyed_rules]
        if layer.kind == "user":
            read_only = _read_only_rules(validated, layer.source)
            read_only_mcp = [rule.pattern for rule in read_only]
            layer.rules = [*read_only, *layer.rules]  # the user's own rules still decide
        if layer.kind in _BELOW_USER:
            layer.rules = [rule.model_copy(update={"below_user": True}) for rule in layer.rules]
        rules.extend(layer.rules)
        merged = _merge(merged, layer.data)
        origins.update(dict.fromkeys(_dotted_keys(layer.data), layer.source))
        origins.update({key: layer.source for key, _ in keyed_rules})

    try:
        combined = ConfigKeys.model_validate(merged)
    except ValidationError as exc:  # pragma: no cover - every layer was valid on its own
        raise _validation_error("configuration", exc) from None
    _check_providers(combined, layers)

    env_base_urls = {
        name: value
        for name in sorted(set(BASE_URL_ENV.values()))
        if (value := env.get(name, "").strip())
    }
    return Settings.model_validate(
        {
            **merged,
            "trusted_folders": trusted_folders,
            "permission_rules": rules,
            "read_only_mcp": read_only_mcp,
            "sources": sources,
            "project_trusted": project_trusted,
            "warnings": warnings,
            "env_base_urls": env_base_urls,
            "origins": origins,
        }
    )


def load_settings_from_environment(
    *,
    workspace: Path | None = None,
    cli_overrides: Mapping[str, Any] | None = None,
    init_options: Mapping[str, Any] | None = None,
) -> Settings:
    """:func:`load_settings` with ``os.environ`` and (by default) the current directory."""
    return load_settings(
        workspace=workspace if workspace is not None else Path.cwd(),
        env=dict(os.environ),
        cli_overrides=cli_overrides,
        init_options=init_options,
    )
