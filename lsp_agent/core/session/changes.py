"""What the turns answering one prompt changed in the workspace's files, as one diff.

The checkpoints filed under the prompt (``checkpoint_recorded``) hold the tree before each
step and after it; the diff from the first step's "before" to the last step's "after" is what
the prompt changed as a whole — an edit undone by a later step is not counted, and files a
command changed are (the trees are of the whole folder). The terminal prints it after
``run`` (``lsp-agent run``'s closing summary).
"""

from __future__ import annotations

import logging
from pathlib import Path

from lsp_agent.core.checkpoints import SnapshotChange, SnapshotStore, checkpoints
from lsp_agent.core.errors import LspAgentError
from lsp_agent.core.interfaces import EventStore
from lsp_agent.core.uris import local_path

_log = logging.getLogger(__name__)


async def prompt_changes(
    store: EventStore, snapshots: SnapshotStore | None, session_id: str, message_id: str
) -> list[SnapshotChange]:
    """The files the prompt ``message_id`` changed, by path; empty without snapshots or
    checkpoints, or when the snapshots cannot be read (the summary is a courtesy)."""
    info = await store.session(session_id)
    if snapshots is None or info is None:
        return []
    steps = [c for c in checkpoints(await store.events(session_id)) if c.message_id == message_id]
    if not steps or steps[0].before == steps[-1].after:
        return []
    try:
        changed = await snapshots.diff(
            Path(local_path(info.workspace_folder)), steps[0].before, steps[-1].after
        )
    except (LspAgentError, OSError):
        _log.warning("could not diff the prompt's snapshots", exc_info=True)
        return []
    return sorted(changed, key=lambda change: change.path)
