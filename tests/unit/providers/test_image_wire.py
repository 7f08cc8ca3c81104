"""An image part in each wire format: Anthropic's base64 ``image`` block, OpenAI's ``image_url``
data URL in a user message's content parts (text and images in order)."""

from __future__ import annotations

from lsp_agent.core.messages import ImagePart, Message, TextPart
from lsp_agent.providers import anthropic, openai

IMAGE = ImagePart(media_type="image/jpeg", data="/9j/4AAQ")
MESSAGE = Message(role="user", parts=(TextPart(text="what is this?"), IMAGE))


def test_anthropic_sends_a_base64_image_block() -> None:
    assert anthropic._message(MESSAGE) == {
        "role": "user",
        "content": [
            {"type": "text", "text": "what is this?"},
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/4AAQ"},
            },
        ],
    }


def test_openai_sends_an_image_url_data_url() -> None:
    assert openai._messages(MESSAGE) == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "what is this?"},
                {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/4AAQ"}},
            ],
        }
    ]


def test_openai_text_only_messages_stay_a_string() -> None:
    plain = Message(role="user", parts=(TextPart(text="a"), TextPart(text="b")))
    assert openai._messages(plain) == [{"role": "user", "content": "a\n\nb"}]
