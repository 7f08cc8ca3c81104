"""What the ACP client offers, read once from ``initialize`` (``clientCapabilities``)."""

from __future__ import annotations

import attrs
from acp.schema import ClientCapabilities


@attrs.frozen(kw_only=True)
class ClientFeatures:
    """The client's optional methods the agent may call; all off until ``initialize``."""

    read_text_file: bool = False
    """``fs/read_text_file``: reads go through the client (its unsaved buffers)."""
    write_text_file: bool = False
    """``fs/write_text_file``: every write and edit goes through the client, never the disk."""
    terminal: bool = False
    """``terminal/*``: bash may run in the client's terminal (``terminal.py``)."""
    elicitation_form: bool = False
    """``elicitation/create`` in form mode: questions may be asked (``elicitation.py``)."""

    @classmethod
    def of(cls, capabilities: ClientCapabilities | None) -> ClientFeatures:
        if capabilities is None:
            return cls()
        fs = capabilities.fs
        elicitation = capabilities.elicitation
        return cls(
            read_text_file=bool(fs and fs.read_text_file),
            write_text_file=bool(fs and fs.write_text_file),
            terminal=bool(capabilities.terminal),
            elicitation_form=bool(elicitation and elicitation.form is not None),
        )
