"""``lsp-agent auth set|remove|status [PROVIDER]``: provider keys in the OS keyring.

``set`` reads the key from a hidden prompt, or from stdin when stdin is not a terminal —
never from the command line, where it would land in the shell history and ``ps``. No
command prints a key. Exit status as the rest of the CLI: 0 ok, 1 failed, 2 bad usage.
"""

from __future__ import annotations

import argparse
import getpass
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from lsp_agent.core.errors import ConfigError

if TYPE_CHECKING:  # imported when run, so building the CLI's parser stays cheap
    from lsp_agent.auth.keyring_index import KeyringIndex
    from lsp_agent.auth.store import KeyStore

__all__ = ["add_auth_parser", "run_auth"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def add_auth_parser(commands: Any) -> None:
    """Add ``auth`` to the CLI's sub-command set (an ``argparse`` sub-parsers object)."""
    auth = commands.add_parser("auth", help="provider keys in the OS keyring")
    verbs = auth.add_subparsers(dest="verb", metavar="VERB", required=True)
    put = verbs.add_parser("set", help="store PROVIDER's key (read from a prompt or stdin)")
    put.add_argument("provider", metavar="PROVIDER")
    remove = verbs.add_parser("remove", help="delete PROVIDER's stored key")
    remove.add_argument("provider", metavar="PROVIDER")
    status = verbs.add_parser("status", help="where each provider's key comes from")
    status.add_argument("provider", metavar="PROVIDER", nargs="?")


def run_auth(
    args: argparse.Namespace,
    *,
    env: Mapping[str, str],
    cwd: Path,
    stdin: TextIO,
    out: TextIO,
    err: TextIO,
    store: KeyStore | None = None,
) -> int:
    from lsp_agent.auth.keys import key_owners
    from lsp_agent.auth.store import KeyStore
    from lsp_agent.config.load import load_settings

    try:
        owners = key_owners(load_settings(workspace=cwd, env=env))
    except ConfigError as error:
        return _fail(err, str(error), EXIT_USAGE)
    store = store if store is not None else KeyStore()
    provider: str | None = args.provider
    if provider is not None and provider not in owners:
        known = ", ".join(sorted(owners))
        return _fail(err, f"unknown provider {provider!r} (known: {known})", EXIT_USAGE)
    if args.verb == "status":
        return _status(owners, provider, env, store, out)
    assert provider is not None  # argparse: required for set and remove
    variable = owners[provider]
    if variable is None:
        return _fail(err, f"provider {provider!r} sends no key (it has no api_key_env)", 2)
    index = _index(env)
    if args.verb == "remove":
        result = store.delete(provider)
        if not result.ok:
            return _fail(err, f"{result.error}", EXIT_FAILED)
        index.remove(provider)
        out.write(f"removed the stored key of {provider}\n")
        return EXIT_OK
    code = _set(provider, variable, store, stdin, out, err)
    if code == EXIT_OK:
        index.add(provider)
    return code


def _index(env: Mapping[str, str]) -> KeyringIndex:
    """The list of the providers with a stored key (auth/keyring_index.py)."""
    from lsp_agent.auth.keyring_index import FILE_NAME, KeyringIndex
    from lsp_agent.workspace.boundary import data_folder_path

    return KeyringIndex(data_folder_path(env) / FILE_NAME)


def _set(
    provider: str, variable: str, store: KeyStore, stdin: TextIO, out: TextIO, err: TextIO
) -> int:
    reason = store.unusable()
    if reason is not None:
        return _fail(err, f"{reason}: set {variable} in the environment instead", EXIT_FAILED)
    prompt = f"{provider} key (input hidden): "
    key = (getpass.getpass(prompt) if stdin.isatty() else stdin.read()).strip()
    if not key:
        return _fail(err, "no key given (nothing was stored)", EXIT_USAGE)
    if any(c.isspace() for c in key):
        return _fail(err, "a key has no spaces or line breaks (nothing was stored)", EXIT_USAGE)
    result = store.set(provider, key)
    if not result.ok:
        return _fail(err, f"{result.error}: set {variable} in the environment instead", 1)
    out.write(f"stored the key of {provider} in the keyring ({store.backend()})\n")
    return EXIT_OK


def _status(
    owners: Mapping[str, str | None],
    provider: str | None,
    env: Mapping[str, str],
    store: KeyStore,
    out: TextIO,
) -> int:
    from lsp_agent.auth.keys import ProviderKeys

    keys = ProviderKeys(env, store=store, ttl=0.0)
    reason = store.unusable()
    out.write(f"keyring: {reason or store.backend()}\n")
    for name in [provider] if provider is not None else sorted(owners):
        variable = owners[name]
        if variable is None:
            out.write(f"{name}: no key needed\n")
            continue
        source = keys.source(name, variable)
        if source == "env":
            where = f"environment ({variable})"
        elif source == "keyring":
            where = f"keyring ({variable} is not set)"
        else:
            where = f"missing: set {variable}" + (
                "" if reason else f" or run `lsp-agent auth set {name}`"
            )
        out.write(f"{name}: {where}\n")
    return EXIT_OK


def _fail(err: TextIO, message: str, code: int) -> int:
    err.write(message.rstrip() + "\n")
    return code
