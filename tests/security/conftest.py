"""The standing attack suite: each finding of the security review, and variants of its class,
as a test that fails on the code before the fix. Fixtures shared by several files live here.

Every test here runs under a home-like layout (:func:`home_layout`, autouse): the temporary
``$HOME`` holds an ssh key, a ``.profile``, git's credential store, a ``.netrc``, a
``.git-credentials``, a Docker and an AWS credentials file, each with its own marker, so an
escape — a file tool, a mention, a sandboxed command or a context file reaching one — shows up
as a marker in what the model, the log or the user saw (:meth:`HomeLayout.leaks`).
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from pathlib import Path

import attrs
import pytest

PRIVATE_KEY_MARKER = "HOMELAYOUT-SSH-KEY-7f3a"


@attrs.frozen
class HomeLayout:
    """The planted ``$HOME``: ``files`` maps each path (relative to ``home``) to the marker
    its content carries."""

    home: Path
    files: dict[str, str]

    def path(self, relative: str) -> Path:
        return self.home / relative

    def leaks(self, *texts: str | bytes | Iterable[str]) -> list[str]:
        """The planted files whose marker appears in any of ``texts`` (also base64-decoded
        spellings are not looked for: the secret filter's tests cover those)."""
        joined = "\n".join(_flatten(texts))
        return [name for name, marker in self.files.items() if marker in joined]


def _flatten(texts: Iterable[object]) -> Iterable[str]:
    for text in texts:
        if isinstance(text, bytes):
            yield text.decode("utf-8", "replace")
        elif isinstance(text, str):
            yield text
        else:
            yield from _flatten(text)  # type: ignore[arg-type]


def plant_home(home: Path) -> HomeLayout:
    """Write the home-like layout into ``home`` (existing files are kept)."""
    docker_auth = base64.b64encode(b"octo:HOMELAYOUT-DOCKER-5c1e").decode()
    contents = {
        ".ssh/id_rsa": (
            "HOMELAYOUT-SSH-KEY-7f3a",
            "-----BEGIN OPENSSH PRIVATE KEY-----\n"
            f"b3BlbnNzaC1rZXktdjEAAAAA{PRIVATE_KEY_MARKER}AAAAAAAAAAAAA\n"
            "-----END OPENSSH PRIVATE KEY-----\n",
        ),
        ".ssh/config": ("HOMELAYOUT-SSH-CONFIG-19d0", "Host HOMELAYOUT-SSH-CONFIG-19d0\n"),
        ".profile": (
            "HOMELAYOUT-PROFILE-2b8c",
            "# HOMELAYOUT-PROFILE-2b8c\nexport PATH=$HOME/bin:$PATH\n",
        ),
        ".config/git/credentials": (
            "HOMELAYOUT-GITSTORE-8e41",
            "https://octo:HOMELAYOUT-GITSTORE-8e41@github.example\n",
        ),
        ".git-credentials": (
            "HOMELAYOUT-GITCRED-4d27",
            "https://octo:HOMELAYOUT-GITCRED-4d27@gitlab.example\n",
        ),
        ".netrc": (
            "HOMELAYOUT-NETRC-6a90",
            "machine api.example\n  login octo\n  password HOMELAYOUT-NETRC-6a90\n",
        ),
        ".docker/config.json": (
            docker_auth,
            '{"auths": {"ghcr.example": {"auth": "' + docker_auth + '"}}}\n',
        ),
        ".aws/credentials": (
            "HOMELAYOUT-AWS-0c55",
            "[default]\naws_secret_access_key = HOMELAYOUT-AWS-0c55\n",
        ),
    }
    files: dict[str, str] = {}
    for relative, (marker, text) in contents.items():
        path = home / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            path.write_text(text)
        files[relative] = marker
    (home / ".ssh").chmod(0o700)
    (home / ".ssh" / "id_rsa").chmod(0o600)
    return HomeLayout(home=home, files=files)


@pytest.fixture(autouse=True)
def home_layout(isolated_home: Path) -> HomeLayout:
    """The home-like ``$HOME`` every security test runs under (see the module docstring)."""
    return plant_home(isolated_home)
