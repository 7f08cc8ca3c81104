"""What an agent review found: one :class:`Finding` per problem, reported by the model through
the ``report_finding`` tool, so findings are data, never prose to parse."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Literal

import attrs

__all__ = ["SEVERITIES", "Finding", "Related", "Severity", "cli_line", "has_errors"]

Severity = Literal["error", "warning", "info", "hint"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info", "hint")
LSP_SEVERITY: dict[Severity, int] = {"error": 1, "warning": 2, "info": 3, "hint": 4}


@attrs.frozen(kw_only=True)
class Related:
    """Another place that matters to a finding (LSP ``relatedInformation``)."""

    path: str
    """Absolute, realpath-ed."""
    line: int
    """1-based."""
    message: str


@attrs.frozen(kw_only=True)
class Finding:
    id: str
    path: str
    """Absolute, realpath-ed, inside the reviewed repository."""
    line: int
    """1-based, in the reviewed version of the file (the work tree, or the index for a
    staged review)."""
    end_line: int
    severity: Severity
    message: str
    related: tuple[Related, ...] = ()

    @property
    def lsp_severity(self) -> int:
        return LSP_SEVERITY[self.severity]


def cli_line(finding: Finding, folder: str) -> str:
    """``path:line: severity: message`` (the path relative to ``folder``; one line)."""
    shown = os.path.relpath(finding.path, folder)
    message = " ".join(finding.message.split())
    return f"{shown}:{finding.line}: {finding.severity}: {message}"


def has_errors(findings: Sequence[Finding]) -> bool:
    return any(f.severity == "error" for f in findings)
