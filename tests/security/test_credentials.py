"""Credentials stay out of reach (issue 31, point 8): the user's credential stores are refused by
every file tool, mention and attachment even when the workspace is ``$HOME``, hidden from
sandboxed commands even when ``allow_read`` or the workspace covers them, and the secret
filter masks what such files hold (netrc passwords, Docker ``auth``, credential URLs).

Runs under the home-like layout of ``conftest.py`` (``home_layout``).
"""

from __future__ import annotations

import base64
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.attachments import AttachmentError, attachment_blocks
from lsp_agent.config.load import load_settings
from lsp_agent.core.attachments import AttachScope
from lsp_agent.core.secrets.filter import SecretFilter
from lsp_agent.core.tooling import ToolOutcome
from lsp_agent.mentions import PromptExpansion
from lsp_agent.sandbox import CommandSandbox
from lsp_agent.testing.editor import RecordingEditor
from lsp_agent.testing.permissions import allow_all
from lsp_agent.testing.tools import tool_context
from lsp_agent.tools.apply_patch import ApplyPatchParams, ApplyPatchTool
from lsp_agent.tools.bash import BashParams, BashTool
from lsp_agent.tools.edit import EditParams, EditTool
from lsp_agent.tools.glob import GlobParams, GlobTool
from lsp_agent.tools.grep import GrepParams, GrepTool
from lsp_agent.tools.list import ListParams, ListTool
from lsp_agent.tools.read import ReadParams, ReadTool
from lsp_agent.tools.write import WriteParams, WriteTool
from lsp_agent.workspace.files import FileLocks

from .conftest import HomeLayout

STORES = [
    ".ssh/id_rsa",
    ".ssh/config",
    ".netrc",
    ".git-credentials",
    ".config/git/credentials",
    ".docker/config.json",
    ".aws/credentials",
]
needs_bwrap = pytest.mark.skipif(
    shutil.which("bwrap") is None or not sys.platform.startswith("linux"),
    reason="bubblewrap is not installed (CI installs it)",
)


def refused(outcome: ToolOutcome, layout: HomeLayout) -> None:
    assert outcome.is_error, outcome.output
    assert "credential store" in outcome.output
    assert layout.leaks(outcome.output) == []


# --- the file tools, with the workspace at $HOME ----------------------------------------


@pytest.mark.parametrize("store", STORES)
async def test_read_refuses_every_store_even_when_the_workspace_is_home(
    home_layout: HomeLayout, store: str
) -> None:
    ctx = tool_context(home_layout.home, ask=allow_all)
    for path in (store, str(home_layout.path(store))):
        outcome = await ReadTool().run(ReadParams(file_path=path), ctx)
        refused(outcome, home_layout)


async def test_a_link_in_the_workspace_to_a_store_is_refused(
    home_layout: HomeLayout, workspace: Path
) -> None:
    (workspace / "notes.txt").symlink_to(home_layout.path(".netrc"))
    (workspace / "keys").symlink_to(home_layout.path(".ssh"))
    ctx = tool_context(workspace, ask=allow_all)  # even an approved outside access

    for path in ("notes.txt", "keys/id_rsa"):
        refused(await ReadTool().run(ReadParams(file_path=path), ctx), home_layout)


@pytest.mark.parametrize("store", [".netrc", ".ssh/authorized_keys", ".docker/config.json"])
async def test_write_and_edit_refuse_the_stores(home_layout: HomeLayout, store: str) -> None:
    ctx = tool_context(home_layout.home, ask=allow_all)
    locks = FileLocks()
    before = home_layout.path(store).read_text() if home_layout.path(store).exists() else None

    wrote = await WriteTool(locks).run(WriteParams(file_path=store, content="planted\n"), ctx)
    edited = await EditTool(locks).run(
        EditParams(file_path=store, old_string="octo", new_string="evil"), ctx
    )

    verb = "Update" if before is not None else "Add"
    patch = "\n".join(["*** Begin Patch", f"*** {verb} File: {store}", "+planted", "*** End Patch"])
    patched = await ApplyPatchTool(locks).run(ApplyPatchParams(patch=patch), ctx)

    refused(wrote, home_layout)
    refused(edited, home_layout)
    assert patched.is_error, patched.output
    assert "credential store" in patched.output
    assert home_layout.leaks(patched.output) == []
    after = home_layout.path(store).read_text() if home_layout.path(store).exists() else None
    assert after == before


async def test_searches_never_show_a_store(home_layout: HomeLayout) -> None:
    ctx = tool_context(home_layout.home, ask=allow_all)
    markers = "|".join(home_layout.files.values())

    everywhere = await GrepTool().run(GrepParams(pattern=markers), ctx)
    listed = await ListTool().run(ListParams(), ctx)
    globbed = await GlobTool().run(GlobParams(pattern="**/*"), ctx)
    inside = [
        await GrepTool().run(GrepParams(pattern="password", path=".netrc"), ctx),
        await GrepTool().run(GrepParams(pattern="auth", path=".docker"), ctx),
        await ListTool().run(ListParams(path=".ssh"), ctx),
        await GlobTool().run(GlobParams(pattern="*", path=".aws"), ctx),
    ]
    beside = await GlobTool().run(GlobParams(pattern="*", path=".config/git"), ctx)

    assert home_layout.leaks(everywhere.output) == [".profile"]  # the only ordinary file
    for outcome in (listed, globbed):
        shown = outcome.output
        assert ".profile" in shown
        for store in (".netrc", ".git-credentials", "id_rsa", "config.json", "credentials"):
            assert store not in shown, shown
    for outcome in inside:
        assert outcome.is_error, outcome.output
        assert home_layout.leaks(outcome.output) == []
    assert "credentials" not in beside.output


async def test_bash_arguments_naming_a_store_are_refused(home_layout: HomeLayout) -> None:
    tool = BashTool(hidden_env=(), sandbox=CommandSandbox("off"))
    ctx = tool_context(home_layout.home, ask=allow_all)
    for command in (
        "cat ~/.netrc",
        "cat .git-credentials",
        "tar cf - .ssh",
        "cp .aws/credentials x",
    ):
        outcome = await tool.run(BashParams(command=command), ctx)
        assert outcome.is_error, outcome.output
        assert "credential store" in outcome.output
        assert home_layout.leaks(outcome.output) == []


# --- mentions and attachments -------------------------------------------------------------


async def test_a_prompt_link_to_a_store_attaches_nothing(home_layout: HomeLayout) -> None:
    blocks: list[dict[str, Any]] = [
        {"type": "resource_link", "uri": home_layout.path(store).as_uri()} for store in STORES
    ]
    scope = AttachScope(folder=str(home_layout.home), roots=(str(home_layout.home),))

    attached = await PromptExpansion(RecordingEditor()).expand(blocks, scope)

    assert len(attached) == len(STORES)
    assert home_layout.leaks(json.dumps(attached)) == []


@pytest.mark.parametrize("store", [".netrc", ".config/git/credentials", ".ssh/id_rsa"])
def test_run_file_refuses_a_store(home_layout: HomeLayout, store: str) -> None:
    with pytest.raises(AttachmentError) as raised:
        attachment_blocks(home_layout.home, [str(home_layout.path(store))], SecretFilter({}))
    assert "credential store" in str(raised.value)


# --- the sandbox --------------------------------------------------------------------------


CAT_ALL = " ; ".join(f'cat "$HOME/{store}" 2>&1 | head -c 300' for store in STORES)


@needs_bwrap
@pytest.mark.parametrize("cover", ["workspace-is-home", "allow-read-home", "default"])
async def test_a_sandboxed_command_sees_no_store(
    home_layout: HomeLayout, workspace: Path, cover: str
) -> None:
    """The paths are in a script, so no argument check sees them: only the sandbox acts."""
    default = load_settings(workspace=workspace, env={"HOME": str(home_layout.home)})
    allow_read = {"allow-read-home": ["~"], "default": default.sandbox.allow_read}.get(cover, [])
    root = home_layout.home if cover == "workspace-is-home" else workspace
    (home_layout.path(".config/git/config")).write_text("[user]\n\tname = Visible Config\n")
    tool = BashTool(hidden_env=(), sandbox=CommandSandbox("required", allow_read=allow_read))
    (root / "probe.sh").write_text(CAT_ALL + ' ; cat "$HOME/.config/git/config"\n')

    outcome = await tool.run(BashParams(command="sh probe.sh"), tool_context(root, ask=allow_all))

    assert outcome.details.sandboxed is True
    assert home_layout.leaks(outcome.output) == []
    assert "Visible Config" in outcome.output  # git's own config stays readable


@needs_bwrap
async def test_a_store_named_by_a_variable_is_hidden_too(
    home_layout: HomeLayout, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "docker-elsewhere"
    elsewhere.mkdir()
    (elsewhere / "config.json").write_text('{"auths": {"x": {"auth": "T1RIRVItU1RPUkUtOWYy"}}}')
    (tmp_path / "kube.yaml").write_text("token: KUBE-ELSEWHERE-3b7\n")
    monkeypatch.setenv("DOCKER_CONFIG", str(elsewhere))
    monkeypatch.setenv("KUBECONFIG", f"/nonexistent:{tmp_path / 'kube.yaml'}")
    tool = BashTool(hidden_env=(), sandbox=CommandSandbox("required", allow_read=[str(tmp_path)]))
    (workspace / "probe.sh").write_text(
        'cat "$DOCKER_CONFIG/config.json"; cat "${KUBECONFIG#*:}"\n'
    )

    outcome = await tool.run(
        BashParams(command="sh probe.sh"), tool_context(workspace, ask=allow_all)
    )

    assert "T1RIRVItU1RPUkUtOWYy" not in outcome.output
    assert "KUBE-ELSEWHERE-3b7" not in outcome.output


def test_the_default_allow_read_leaves_gits_credential_store_out(workspace: Path) -> None:
    default = load_settings(workspace=workspace, env={"HOME": "/home/u"}).sandbox.allow_read
    assert "~/.config/git" not in default
    assert not any(entry.startswith("~/.config/git/cred") for entry in default)
    assert "~/.config/git/config" in default


# --- the secret filter --------------------------------------------------------------------

NETRC = [
    "machine api.example login octo password Netrc-Pass-91a",
    "machine api.example\n  login octo\n  password Netrc-Pass-91a\n",
    "machine a.example password Netrc-Pass-91a login octo",
    "default login anonymous password Netrc-Pass-91a",
    "machine x\n\tlogin y\n\taccount Netrc-Pass-91a\n",
]


@pytest.mark.parametrize("text", NETRC)
def test_netrc_passwords_are_masked(text: str) -> None:
    masked = SecretFilter({}).mask(text)
    assert "Netrc-Pass-91a" not in masked.text
    assert "netrc password" in masked.kinds


def test_docker_auth_values_are_masked() -> None:
    auth = base64.b64encode(b"user:Docker-Pass-77").decode()
    for text in (
        json.dumps({"auths": {"ghcr.io": {"auth": auth}}}, indent=2),
        f'{{"auths":{{"r":{{"auth":"{auth}","identitytoken":"Ident-Token-4f9a8c"}}}}}}',
    ):
        masked = SecretFilter({}).mask(text)
        assert auth not in masked.text
        assert "Ident-Token-4f9a8c" not in masked.text
        assert "Docker auth" in masked.kinds


@pytest.mark.parametrize(
    "line",
    [
        "https://octo:Plain-Store-Pass-1@github.example",
        "https://octo%40corp:Plain-Store-Pass-1@git.example:8443/path",
        "https://Abcdef0123456789Abcdef0123@git.example",
    ],
)
def test_git_credential_urls_are_masked(line: str) -> None:
    masked = SecretFilter({}).mask(line)
    assert "Plain-Store-Pass-1" not in masked.text
    assert "Abcdef0123456789Abcdef0123" not in masked.text
    assert masked.kinds
