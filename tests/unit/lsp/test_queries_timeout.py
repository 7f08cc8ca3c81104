"""An editor query the connection gave up on (``editor.request_timeout``) is a result the
model reads, naming the wait — not "an error"."""

from __future__ import annotations

from typing import Any

from lsp_agent.lsp.queries import LspEditorQueries
from lsp_agent.lsp.timeouts import ClientTimeout, RequestTimeouts
from lsp_agent.search.editor_queries import EditorQuery, QueryFailed


class SilentClient:
    """A connection whose requests all run out of time."""

    supports_document_changes = True

    def notify(self, method: str, params: dict[str, Any]) -> None:
        pass

    async def request(self, method: str, params: Any) -> Any:
        raise ClientTimeout(method, RequestTimeouts(request=2).of(method))


async def test_a_query_the_connection_gave_up_on_says_how_long_it_waited() -> None:
    queries = LspEditorQueries(SilentClient(), ["hover"])
    found = await queries.query("ses_1", EditorQuery(kind="hover", path="/w/a.py", line=0))
    assert found == QueryFailed("the editor did not answer within 2 s")


def test_asks_wait_for_a_person_everything_else_for_a_program() -> None:
    timeouts = RequestTimeouts(ask=1800, request=10)
    assert timeouts.of("agent/session/requestPermission") == 1800
    assert timeouts.of("window/showMessageRequest") == 1800
    assert timeouts.of("agent/session/askQuestion") == 1800
    for method in ("workspace/applyEdit", "agent/documents/save", "agent/editor/query"):
        assert timeouts.of(method) == 10
    assert ClientTimeout("x", 1800).waited == "30 min"
    assert ClientTimeout("x", 10).waited == "10 s"
