"""Permission fakes for tool tests: allow everything, or answer from a script."""

from __future__ import annotations

from collections.abc import Callable

from lsp_agent.core.permission.rules import ALLOWED, PermissionRequest, PermissionVerdict


async def allow_all(request: PermissionRequest) -> PermissionVerdict:
    """A gate that allows every request (for tests of what a tool does once allowed)."""
    return ALLOWED


class RecordingAsk:
    """Records every request; answers with ``decide(request)`` (default: allow)."""

    def __init__(
        self, decide: Callable[[PermissionRequest], PermissionVerdict] | None = None
    ) -> None:
        self.requests: list[PermissionRequest] = []
        self._decide = decide or (lambda _request: ALLOWED)

    async def __call__(self, request: PermissionRequest) -> PermissionVerdict:
        self.requests.append(request)
        return self._decide(request)

    def permissions(self) -> list[str]:
        return [r.permission for r in self.requests]


def deny(message: str = "denied by test", *, stop_turn: bool = False) -> PermissionVerdict:
    return PermissionVerdict(allowed=False, message=message, stop_turn=stop_turn)


async def workspace_only(request: PermissionRequest) -> PermissionVerdict:
    """Allows everything but ``external_directory`` (what a non-interactive run does)."""
    if request.permission == "external_directory":
        return deny("not approved: outside the workspace")
    return ALLOWED
