"""Images in the core: what an image block must be, the placeholder that stands for it, how the
transcript folds into messages with the image, and what a model that takes none is sent."""

from __future__ import annotations

import base64

from lsp_agent.core.compaction.policy import render_part
from lsp_agent.core.history import fold, without_images
from lsp_agent.core.images import (
    MAX_IMAGE_BYTES,
    image_block,
    image_problem,
    images_of,
    placeholder,
    sniff,
)
from lsp_agent.core.messages import ImagePart, Message, TextPart
from lsp_agent.core.transcript import TextPartView, TranscriptMessage

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 24
B64 = base64.b64encode(PNG).decode()


def test_an_image_is_known_by_its_first_bytes() -> None:
    assert sniff(PNG) == "image/png"
    assert sniff(b"\xff\xd8\xff\xe0rest") == "image/jpeg"
    assert sniff(b"GIF89a...") == "image/gif"
    assert sniff(b"RIFF\0\0\0\0WEBPVP8 ") == "image/webp"
    assert sniff(b"<svg></svg>") is None


def test_a_block_must_be_an_image_of_its_type_within_the_cap() -> None:
    assert image_problem(image_block(PNG, "image/png")) is None
    assert "image/svg+xml" in str(image_problem({"mimeType": "image/svg+xml", "data": B64}))
    assert image_problem({"mimeType": "image/jpeg", "data": B64}) == (
        "an image said to be image/jpeg that is image/png"
    )
    assert image_problem({"mimeType": "image/png", "data": "not base64!"}) == (
        "an image whose data is not base64"
    )
    big = base64.b64encode(PNG + b"\0" * MAX_IMAGE_BYTES).decode()
    assert image_problem({"mimeType": "image/png", "data": big}) == "an image over 5 MiB"


def test_the_placeholder_names_the_file_its_type_and_size() -> None:
    assert placeholder(image_block(PNG, "image/png", "ui/shot.png")) == (
        f"[image: ui/shot.png (image/png, {len(PNG)} bytes)]"
    )
    assert placeholder(image_block(PNG, "image/png")) == f"[image (image/png, {len(PNG)} bytes)]"


def test_a_prompts_images_are_its_own_then_its_attachments() -> None:
    own = image_block(PNG, "image/png", "a.png")
    linked = image_block(PNG, "image/png", "b.png")
    content = [{"type": "text", "text": "hi"}, own]
    attachments = [{"text": "x", "source": "#diff"}, {"text": "[image]", "image": linked}]
    assert images_of(content, attachments) == [own, linked]


def user_message_with_image() -> TranscriptMessage:
    return TranscriptMessage(
        message_id="m1",
        role="user",
        status="completed",
        parts=(
            TextPartView(part_id="m1.0", type="text", text="look"),
            TextPartView(
                part_id="m1.1",
                type="text",
                text="[image: shot.png (image/png, 32 bytes)]",
                image_type="image/png",
                image_data=B64,
            ),
        ),
    )


def test_the_transcript_folds_into_the_placeholder_and_the_image() -> None:
    [message] = fold([user_message_with_image()])
    assert message.parts == (
        TextPart(text="look"),
        TextPart(text="[image: shot.png (image/png, 32 bytes)]"),
        ImagePart(media_type="image/png", data=B64),
    )
    # the transcript people are shown has the placeholder, never the bytes
    assert B64 not in str(user_message_with_image().to_json())


def test_a_model_that_takes_no_images_gets_the_placeholder_only() -> None:
    messages = fold([user_message_with_image()])
    plain = Message(role="assistant", parts=(TextPart(text="ok"),))
    stripped = without_images([*messages, plain])
    assert stripped[0].parts == (
        TextPart(text="look"),
        TextPart(text="[image: shot.png (image/png, 32 bytes)]"),
    )
    assert stripped[1] is plain  # untouched messages stay the same objects


def test_a_compaction_summary_reads_an_image_as_a_line_of_text() -> None:
    part = ImagePart(media_type="image/png", data=B64)
    line = render_part(part, limit=None, role="user")
    assert line.startswith("[User image]: image/png")
    assert B64 not in line
