"""scripts/install (the README's first command): a venv in the user data folder, `lsp-agent`
linked into ~/.local/bin, and the PATH line to use when that folder is not on PATH yet; each
step is announced as it starts and pip's progress is shown, not silenced.

Offline and quick: the venv is made beforehand without pip and sees this environment's
packages (pip, setuptools, the dependencies; not lsp-agent itself) through a ``.pth`` file, so
the script's own `pip install` only builds and installs lsp-agent, from no index."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
INSTALL = REPO / "scripts" / "install"
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


def _deps_view(tmp_path: Path) -> Path:
    """This environment's site-packages without lsp-agent (so pip installs the real one)."""
    view = tmp_path / "deps"
    view.mkdir()
    site = Path(sysconfig.get_paths()["purelib"])
    for entry in site.iterdir():
        name = entry.name.lower()
        if name.startswith(("lsp_agent", "__editable__", "_lsp_agent")) or name.endswith(".pth"):
            continue
        (view / entry.name).symlink_to(entry)
    return view


def _prepared_venv(home: Path, tmp_path: Path) -> Path:
    venv = home / ".local" / "share" / "lsp-agent" / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (site,) = (venv / "lib").glob("python3*/site-packages")
    (site / "deps.pth").write_text(f"{_deps_view(tmp_path)}\n")
    return venv


def _install(home: Path, path: str) -> subprocess.CompletedProcess[str]:
    env = {
        "HOME": str(home),
        "PATH": path,
        "PIP_NO_INDEX": "1",
        "PIP_NO_BUILD_ISOLATION": "0",  # pip's spelling of --no-build-isolation
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_NO_CACHE_DIR": "1",
    }
    return subprocess.run(
        [str(INSTALL)], env=env, capture_output=True, text=True, timeout=300, check=False
    )


def test_install_puts_lsp_agent_on_the_path_it_names(isolated_home: Path, tmp_path: Path) -> None:
    venv = _prepared_venv(isolated_home, tmp_path)
    result = _install(isolated_home, SYSTEM_PATH)
    assert result.returncode == 0, result.stderr
    bin_dir = isolated_home / ".local" / "bin"
    assert (bin_dir / "lsp-agent").resolve() == (venv / "bin" / "lsp-agent").resolve()
    # Progress: each step announced before it runs, and pip's own lines in between.
    steps = [line for line in result.stdout.splitlines() if line.startswith("install: [")]
    assert [line[: len("install: [1/3] ")] for line in steps] == [
        "install: [1/3] ",
        "install: [2/3] ",
        "install: [3/3] ",
    ]
    pip_lines = result.stdout.split(steps[1], 1)[1].split(steps[2], 1)[0]
    assert "Successfully installed lsp-agent-0.1.0" in pip_lines
    assert f"install: done: lsp-agent 0.1.0 is {bin_dir / 'lsp-agent'}" in result.stdout
    assert f"{bin_dir} is not on PATH in this shell" in result.stdout
    export = next(line.strip() for line in result.stdout.splitlines() if "export PATH=" in line)
    assert export == f'export PATH="{bin_dir}:$PATH"'

    # The line it printed, then the bare command, in a shell with only the system PATH.
    shell = subprocess.run(
        ["bash", "-c", f"{export}\ncommand -v lsp-agent\nlsp-agent --version"],
        env={"HOME": str(isolated_home), "PATH": SYSTEM_PATH},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert shell.returncode == 0, shell.stderr
    assert shell.stdout.splitlines() == [str(bin_dir / "lsp-agent"), "lsp-agent 0.1.0"]
    # the installed package, not this checkout's editable one
    installed = list((venv / "lib").glob("python3*/site-packages/lsp_agent/__init__.py"))
    assert len(installed) == 1

    # Again (an update), now with the folder on PATH: no PATH advice.
    again = _install(isolated_home, f"{bin_dir}:{SYSTEM_PATH}")
    assert again.returncode == 0, again.stderr
    assert "not on PATH" not in again.stdout
    assert "lsp-agent 0.1.0" in again.stdout
