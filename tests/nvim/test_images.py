"""An image from Neovim (docs/protocol.md "Images"): `@shot.png` in a prompt links the file,
and the server attaches it as an image the model sees; the chat shows it as a line."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from tests.support.images import PNG


def test_an_image_file_mentioned_in_the_chat_reaches_the_model_as_an_image(
    editor: Any, workspace: Path
) -> None:
    (workspace / "shot.png").write_bytes(PNG)
    editor.fake_llm.set_script({"turns": [{"text": "A red dot."}]})
    editor.command("LspAgent chat what is in @shot.png?")
    editor.wait_chat("A red dot.")
    editor.wait_idle()
    (request,) = editor.model_requests()
    sources = [
        block["source"]
        for message in request["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block["type"] == "image"
    ]
    assert sources == [
        {"type": "base64", "media_type": "image/png", "data": base64.b64encode(PNG).decode()}
    ]
    assert "<shot.png>" in editor.chat_lines()  # the link, as sent
