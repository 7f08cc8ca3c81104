"""How many leading words name "the same command" for an "always allow" answer.

Approving ``git log --oneline`` for good should approve ``git log`` with any arguments, not
every ``git`` command, and not only this exact line. The table below says, for a command (or a
command with its sub-command), how many leading words make up its identity:
``git`` → 2 (``git log``), ``npm run`` → 3 (``npm run dev``). The longest known prefix wins;
a command not in the table is identified by its first word alone (``ls -la`` → ``ls``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from lsp_agent.core.permission.rules import literal

__all__ = ["ARITY", "always_pattern", "command_prefix"]

# Commands whose first argument is a sub-command that changes what they do.
_WITH_SUBCOMMAND = (
    "apt",
    "apt-get",
    "az",
    "brew",
    "bun",
    "bundle",
    "cargo",
    "composer",
    "conda",
    "deno",
    "docker",
    "dotnet",
    "dnf",
    "flatpak",
    "gcloud",
    "gem",
    "gh",
    "git",
    "glab",
    "go",
    "gradle",
    "helm",
    "kubectl",
    "make",
    "mvn",
    "npm",
    "npx",
    "pacman",
    "pip",
    "pip3",
    "pipx",
    "pnpm",
    "podman",
    "poetry",
    "pyenv",
    "rustup",
    "snap",
    "swift",
    "systemctl",
    "terraform",
    "uv",
    "yarn",
    "yum",
    "zypper",
)

# Sub-commands that take a sub-command (or a script name) of their own.
_WITH_SUBSUBCOMMAND = (
    "aws",  # aws s3 ls
    "bun run",
    "bun x",
    "cargo run",
    "conda env",
    "docker compose",
    "docker container",
    "docker image",
    "docker network",
    "docker volume",
    "gh api",
    "gh issue",
    "gh pr",
    "gh release",
    "gh repo",
    "gh run",
    "gh workflow",
    "git remote",
    "git stash",
    "git submodule",
    "git worktree",
    "go mod",
    "kubectl config",
    "kubectl rollout",
    "npm exec",
    "npm run",
    "pipenv run",
    "pnpm dlx",
    "pnpm exec",
    "pnpm run",
    "poetry run",
    "python -m",
    "python3 -m",
    "uv pip",
    "uv run",
    "uv tool",
    "yarn dlx",
    "yarn run",
)

ARITY: Mapping[str, int] = {
    **dict.fromkeys(_WITH_SUBCOMMAND, 2),
    **dict.fromkeys(_WITH_SUBSUBCOMMAND, 3),
}
"""Known command prefixes (words joined by one space) → how many words identify the command."""

_LONGEST_KEY = max(len(key.split()) for key in ARITY)


def command_prefix(words: Sequence[str]) -> tuple[str, ...]:
    """The words that identify the command ``words`` (its name first).

    ``git log --oneline`` → ``("git", "log")``; ``ls -la`` → ``("ls",)``; a command shorter
    than its arity keeps all its words (``npm run`` → ``("npm", "run")``).
    """
    for size in range(min(len(words), _LONGEST_KEY), 0, -1):
        arity = ARITY.get(" ".join(words[:size]))
        if arity is not None:
            return tuple(words[:arity])
    return tuple(words[:1])


def always_pattern(words: Sequence[str]) -> str:
    """The permission pattern an "always" answer saves: the prefix, its wildcards literal
    (``git 'c*'`` saves ``git c[*] *``, never a pattern for ``git clean``), and `` *``."""
    return " ".join(literal(word) for word in command_prefix(words)) + " *"
