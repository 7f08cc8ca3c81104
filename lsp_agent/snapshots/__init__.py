"""snapshots: every step undoable, in a hidden git repository per workspace folder."""

from lsp_agent.snapshots.git_shadow import PRUNE_INTERVAL, GitShadowSnapshots, PruneReport
from lsp_agent.snapshots.shadow_repo import (
    LARGE_FILE_LIMIT,
    ChangeStatus,
    FileChange,
    SnapshotError,
)

__all__ = [
    "LARGE_FILE_LIMIT",
    "PRUNE_INTERVAL",
    "ChangeStatus",
    "FileChange",
    "GitShadowSnapshots",
    "PruneReport",
    "SnapshotError",
]
