"""The inline engine with an injected clock, against the fake's ``/v1/completions``: the cap
stops requests for the rest of the hour (one note), and they resume once the hour frees up;
a superseded request answers nothing and asks no model."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsp_agent.completion.budget import TokenCap
from lsp_agent.completion.exclusion import Exclusions
from lsp_agent.completion.inline import Cursor, InlineCompletions
from lsp_agent.completion.model import FimModel
from lsp_agent.core.secrets.filter import SecretFilter
from lsp_agent.testing.clock import FakeClock, SequentialIds
from lsp_agent.testing.fake_llm import FakeLLMServer


def engine(
    fake: FakeLLMServer, folder: Path, clock: FakeClock, cap: int, notes: list[str]
) -> InlineCompletions:
    versions: dict[str, int] = {}
    return InlineCompletions(
        model=FimModel(model="coder", base_url=fake.openai_base_url, api_key_env=None, env={}),
        exclusions=Exclusions(
            folders=lambda: [str(folder)],
            globs=[],
            secrets=SecretFilter({}),
            clock=clock,
            ignored=lambda _folder, _path, _folders: False,
        ),
        tasks=None,
        buffers=lambda _path: [],
        version_of=versions.get,
        clock=clock,
        ids=SequentialIds(),
        debounce=0.15,
        cap=TokenCap(cap, clock.now),
        notify=notes.append,
    )


def cursor(folder: Path, text: str, version: int) -> Cursor:
    path = folder / "a.py"
    return Cursor(uri=path.as_uri(), path=str(path), version=version, text=text, offset=len(text))


async def test_the_cap_pauses_completion_until_the_hour_frees_up(tmp_path: Path) -> None:
    clock, notes = FakeClock(), list[str]()
    async with FakeLLMServer({"completions": [{"text": "x", "prompt_tokens": 90}]}) as fake:
        inline = engine(fake, tmp_path, clock, cap=100, notes=notes)
        first = await inline.complete(cursor(tmp_path, "a = ", 1))
        assert first is not None
        assert first.text == "x"
        assert clock.sleeps == [0.15]  # the debounce, on the injected clock
        assert await inline.complete(cursor(tmp_path, "a = 1", 2)) is not None  # 91 < 100
        assert await inline.complete(cursor(tmp_path, "a = 12", 3)) is None  # 182 ≥ 100
        assert await inline.complete(cursor(tmp_path, "a = 123", 4)) is None
        assert len(fake.requests) == 2
        assert len(notes) == 1
        assert "max_tokens_per_hour = 100" in notes[0]
        clock.advance(3600)
        again = await inline.complete(cursor(tmp_path, "a = 1234", 5))
        assert again is not None
        assert len(fake.requests) == 3
        assert inline.stats.answered == 3
        await inline.aclose()


async def test_a_superseded_request_answers_nothing_and_asks_no_model(tmp_path: Path) -> None:
    clock, notes = FakeClock(), list[str]()
    async with FakeLLMServer({"completions": [{"text": "y"}]}) as fake:
        inline = engine(fake, tmp_path, clock, cap=0, notes=notes)
        gate = asyncio.Event()
        sleep = clock.sleep

        async def slow_sleep(seconds: float) -> None:
            await gate.wait()
            await sleep(seconds)

        clock.sleep = slow_sleep  # type: ignore[method-assign]
        older = asyncio.ensure_future(inline.complete(cursor(tmp_path, "b = ", 1)))
        await asyncio.sleep(0)
        inline.changed(cursor(tmp_path, "", 0).uri)  # the user typed on
        gate.set()
        assert await older is None
        assert fake.requests == []
        await inline.aclose()
