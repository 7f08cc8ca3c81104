"""Where the user's credentials live: the files and folders no tool and no command may see.

Credential stores of git, ssh, gpg, Docker, the cloud CLIs, package registries, database
clients and browsers sit at well-known places under ``$HOME`` (and ``$XDG_CONFIG_HOME``), or
where an environment variable says (``DOCKER_CONFIG``, ``KUBECONFIG``…). The file tools
refuse them and the sandbox hides them even when the workspace is ``$HOME`` or an
``allow_read`` entry covers them (docs/security.md "Credentials").

:func:`credential_paths` is pure path arithmetic: nothing is resolved or checked for
existence. :func:`real_credential_paths` follows their links, as the file checks compare them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping
from typing import Final

__all__ = ["CREDENTIAL_ENV", "CREDENTIAL_HOME_PATHS", "credential_paths", "real_credential_paths"]

CREDENTIAL_HOME_PATHS: Final = (
    # ssh, gpg, the system keyrings and password managers
    ".ssh",
    ".gnupg",
    ".password-store",
    ".local/share/keyrings",
    ".config/op",
    # git and the forges' CLIs
    ".git-credentials",
    ".config/git/credentials",
    ".config/gh",
    ".config/hub",
    ".config/glab-cli",
    # netrc (curl, git, Python, ftp)
    ".netrc",
    "_netrc",
    # containers and clusters
    ".docker",
    ".kube",
    ".config/helm",
    # cloud CLIs
    ".aws",
    ".config/gcloud",
    ".azure",
    ".oci",
    ".boto",
    ".s3cfg",
    ".config/rclone",
    ".databrickscfg",
    ".terraform.d/credentials.tfrc.json",
    ".vault-token",
    # package registries
    ".npmrc",
    ".yarnrc",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".m2/settings.xml",
    ".m2/settings-security.xml",
    ".gradle/gradle.properties",
    ".composer/auth.json",
    ".config/composer/auth.json",
    ".nuget/NuGet/NuGet.Config",
    ".config/NuGet/NuGet.Config",
    # database clients
    ".pgpass",
    ".my.cnf",
    ".mylogin.cnf",
    # browsers (cookies, saved passwords)
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
)
"""Relative to ``$HOME``."""

_XDG_CONFIG_PATHS: Final = (
    "git/credentials",
    "gh",
    "hub",
    "glab-cli",
    "helm",
    "gcloud",
    "rclone",
    "op",
    "composer/auth.json",
    "NuGet/NuGet.Config",
)
"""Relative to ``$XDG_CONFIG_HOME`` when it is set elsewhere than ``~/.config``."""

CREDENTIAL_ENV: Final = (
    "NETRC",
    "DOCKER_CONFIG",
    "KUBECONFIG",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_CONFIG_FILE",
    "CLOUDSDK_CONFIG",
    "AZURE_CONFIG_DIR",
    "GNUPGHOME",
    "PASSWORD_STORE_DIR",
    "GH_CONFIG_DIR",
    "NPM_CONFIG_USERCONFIG",
    "PGPASSFILE",
    "VAULT_CONFIG_PATH",
    "GOOGLE_APPLICATION_CREDENTIALS",
)
"""Variables that name a credential file or folder (``KUBECONFIG``: a ``:``-separated list)."""


def credential_paths(env: Mapping[str, str]) -> tuple[str, ...]:
    """The absolute credential locations for ``env`` (its ``HOME``, ``XDG_CONFIG_HOME`` and
    the variables in :data:`CREDENTIAL_ENV`), normalized, not resolved, in a stable order."""
    found: list[str] = []
    home = env.get("HOME", "")
    if os.path.isabs(home) and os.path.normpath(home) != "/":
        found += [os.path.join(home, entry) for entry in CREDENTIAL_HOME_PATHS]
    xdg = env.get("XDG_CONFIG_HOME", "")
    if os.path.isabs(xdg) and os.path.normpath(xdg) != "/":
        found += [os.path.join(xdg, entry) for entry in _XDG_CONFIG_PATHS]
    cargo = env.get("CARGO_HOME", "")
    if os.path.isabs(cargo):
        found += [os.path.join(cargo, "credentials"), os.path.join(cargo, "credentials.toml")]
    for name in CREDENTIAL_ENV:
        for entry in env.get(name, "").split(os.pathsep if name == "KUBECONFIG" else "\0"):
            if os.path.isabs(entry) and os.path.normpath(entry) != "/":
                found.append(entry)
    return tuple(dict.fromkeys(os.path.normpath(path) for path in found))


_Stamp = tuple[tuple[int, int, int, int] | None, ...]
_RACY_NS: Final = 2_000_000_000
_KEPT: Final = 16
_real_paths: dict[tuple[str, ...], tuple[_Stamp, tuple[str, ...]]] = {}
"""A memo (like ``functools.cache``): the paths of :func:`credential_paths` → the stamp of
the folders on the way and their ``realpath`` s."""


def real_credential_paths(env: Mapping[str, str]) -> tuple[str, ...]:
    """:func:`credential_paths` of ``env`` with their links followed (``realpath``).

    Following some 60 paths takes about a millisecond, and the file tools need them on every
    call; so the answer is kept and reused while no folder on the way to any of them changed
    (its device, inode, modification and change time): making, renaming or removing a link
    anywhere on the way changes its folder. A folder modified in the last two seconds is not
    trusted to show the next change (a file system's clock may be coarse): nothing is kept
    then, as git does for its index.
    """
    paths = credential_paths(env)
    now = time.time_ns()
    stamp = _stamp(_folders_on_the_way(paths))
    kept = _real_paths.get(paths)
    if kept is not None and kept[0] == stamp:
        return kept[1]
    real = tuple(dict.fromkeys(os.path.realpath(path) for path in paths))
    if all(entry is None or now - entry[2] > _RACY_NS for entry in stamp):
        if len(_real_paths) >= _KEPT:
            _real_paths.clear()
        _real_paths[paths] = (stamp, real)
    return real


def _folders_on_the_way(paths: Iterable[str]) -> tuple[str, ...]:
    folders: dict[str, None] = {}
    for path in paths:
        folder = os.path.dirname(path)
        while folder not in folders:
            folders[folder] = None
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
    return tuple(folders)


def _stamp(folders: Iterable[str]) -> _Stamp:
    found: list[tuple[int, int, int, int] | None] = []
    for folder in folders:
        try:
            st = os.stat(folder)
        except OSError:
            found.append(None)
        else:
            found.append((st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns))
    return tuple(found)
