"""The agent review's findings as the client's diagnostics (``textDocument/publishDiagnostics``).

One set per server: a rerun replaces it whole (every file of the old set not in the new one
is cleared), "Dismiss" removes one finding and publishes its file again. The diagnostics
carry ``source: "lsp-agent"``, ``code: "review"`` and ``data: {findingId}``, so any LSP client
shows them and the code actions find their finding again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lsp_agent.code_review.findings import Finding
from lsp_agent.core.uris import file_uri

__all__ = ["REVIEW_CODE", "SOURCE", "PublishedFindings", "finding_diagnostic"]

SOURCE = "lsp-agent"
REVIEW_CODE = "review"


class PublishedFindings:
    def __init__(self, notify: Callable[[str, dict[str, Any]], None]) -> None:
        self._notify = notify
        self._findings: dict[str, Finding] = {}
        self._uris: set[str] = set()
        self.root = ""
        """The reviewed repository's root (the last review's)."""

    def replace(self, findings: Sequence[Finding], root: str) -> None:
        """The new set: published per file; the files of the old set left out are cleared."""
        self._findings = {f.id: f for f in findings}
        self.root = root
        self._publish_all()

    def get(self, finding_id: str) -> Finding | None:
        return self._findings.get(finding_id)

    def all(self) -> list[Finding]:
        return list(self._findings.values())

    def dismiss(self, finding_id: str) -> bool:
        """Remove one finding (False: no such finding is published)."""
        if self._findings.pop(finding_id, None) is None:
            return False
        self._publish_all()
        return True

    def _publish_all(self) -> None:
        by_uri: dict[str, list[dict[str, Any]]] = {}
        for finding in self._findings.values():
            by_uri.setdefault(file_uri(finding.path), []).append(finding_diagnostic(finding))
        for uri in sorted(self._uris - by_uri.keys()):
            self._notify("textDocument/publishDiagnostics", {"uri": uri, "diagnostics": []})
        for uri, diagnostics in by_uri.items():
            self._notify(
                "textDocument/publishDiagnostics", {"uri": uri, "diagnostics": diagnostics}
            )
        self._uris = set(by_uri)


def finding_diagnostic(finding: Finding) -> dict[str, Any]:
    """The finding as an LSP diagnostic (whole lines: a finding names lines, not columns)."""
    diagnostic: dict[str, Any] = {
        "range": _lines(finding.line, finding.end_line),
        "severity": finding.lsp_severity,
        "source": SOURCE,
        "code": REVIEW_CODE,
        "message": finding.message,
        "data": {"findingId": finding.id},
    }
    if finding.related:
        diagnostic["relatedInformation"] = [
            {
                "location": {"uri": file_uri(r.path), "range": _lines(r.line, r.line)},
                "message": r.message or finding.message,
            }
            for r in finding.related
        ]
    return diagnostic


def _lines(first: int, last: int) -> dict[str, Any]:
    """1-based lines ``first`` … ``last`` as an LSP range (to the start of the next line)."""
    return {
        "start": {"line": first - 1, "character": 0},
        "end": {"line": last, "character": 0},
    }
