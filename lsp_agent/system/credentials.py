"""Where the user's credentials live: the files and folders no tool and no command may see.

Credential stores of git, ssh, gpg, Docker, the cloud CLIs, package registries, database
clients and browsers sit at well-known places under ``$HOME`` (and ``$XDG_CONFIG_HOME``), or
where an environment variable says (``DOCKER_CONFIG``, ``KUBECONFIG``…). The file tools
refuse them and the sandbox hides them even when the workspace is ``$HOME`` or an
``allow_read`` entry covers them (docs/security.md "Credentials").

Pure path arithmetic: nothing is resolved or checked for existence here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Final

__all__ = ["CREDENTIAL_ENV", "CREDENTIAL_HOME_PATHS", "credential_paths"]

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
