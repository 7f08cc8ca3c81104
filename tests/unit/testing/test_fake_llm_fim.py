"""The fake LLM's ``/v1/completions`` (fill in the middle), driven by the real OpenAI SDK: the
scripted answers in order, whole and streamed, kept apart from the agent's turns."""

from __future__ import annotations

import openai
import pytest

from lsp_agent.testing.fake_llm import FakeLLMServer


def _client(server: FakeLLMServer) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="k", max_retries=0)


async def test_completions_answer_in_order_and_repeat_the_last() -> None:
    script = {"turns": [{"text": "agent turn"}], "completions": [{"text": "a + b"}, {"text": "x"}]}
    async with FakeLLMServer(script) as server:
        texts = []
        async with _client(server) as client:
            for _ in range(3):
                answer = await client.completions.create(
                    model="coder", prompt="def add(a, b):\n    return ", suffix="\n", max_tokens=16
                )
                texts.append(answer.choices[0].text)
        assert texts == ["a + b", "x", "x"]
        assert answer.usage is not None
        assert answer.usage.completion_tokens == 1
        records = server.requests
        assert [r.turn for r in records] == ["completion"] * 3
        assert records[0].body["suffix"] == "\n"
        assert records[0].path == "/v1/completions"
        assert server.remaining_turns == 1  # the agent's turn is untouched


async def test_completions_stream_pieces_and_usage() -> None:
    script = {"completions": [{"text": ["foo", "(bar)"], "prompt_tokens": 7}]}
    async with FakeLLMServer(script) as server:
        async with _client(server) as client:
            stream = await client.completions.create(
                model="coder",
                prompt="x = ",
                suffix="",
                max_tokens=16,
                stream=True,
                stream_options={"include_usage": True},
            )
            chunks = [chunk async for chunk in stream]
        text = "".join(c.choices[0].text for c in chunks if c.choices)
        assert text == "foo(bar)"
        usage = [c.usage for c in chunks if c.usage is not None]
        assert usage
        assert usage[-1].prompt_tokens == 7
        assert usage[-1].completion_tokens == 2
        assert server.requests[0].stream is True


async def test_a_completion_without_script_is_empty_and_a_status_is_an_error() -> None:
    async with FakeLLMServer({}) as server, _client(server) as client:
        answer = await client.completions.create(model="m", prompt="p", max_tokens=4)
        assert answer.choices[0].text == ""
        server.set_script({"completions": [{"status": 503}]})
        with pytest.raises(openai.APIStatusError) as raised:
            await client.completions.create(model="m", prompt="p", max_tokens=4)
        assert raised.value.status_code == 503


async def test_an_answer_by_prompt_text_is_served_outside_the_order() -> None:
    script = {
        "completions": [
            {"text": "a + b"},
            {"text": "EDIT 1-1", "prompt_contains": "predict the next edit"},
            {"text": "x"},
        ]
    }
    async with FakeLLMServer(script) as server, _client(server) as client:
        texts = []
        for prompt in [
            "x = ",
            "You predict the next edit ...",
            "y = ",
            "z = ",
            "predict the next edit",
        ]:
            answer = await client.completions.create(model="m", prompt=prompt, max_tokens=4)
            texts.append(answer.choices[0].text)
    assert texts == ["a + b", "EDIT 1-1", "x", "x", "EDIT 1-1"]
    assert [r.attempt for r in server.requests] == [0, 1, 2, 2, 1]
