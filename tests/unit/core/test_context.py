"""The baseline note and the notes that follow it (pure functions)."""

from __future__ import annotations

from lsp_agent.core.clock import iso_time
from lsp_agent.core.context import (
    InstructionSource,
    SourcesSnapshot,
    build_baseline,
    changes,
    current_epoch,
)
from lsp_agent.core.events import StoredEvent, encode

AGENTS = "/ws/AGENTS.md"


def snap(
    text: str | None = "Use tabs.", *, error: str | None = None, skills: str = ""
) -> SourcesSnapshot:
    source = InstructionSource(path=AGENTS, text=None if error else text, error=error)
    return SourcesSnapshot(
        workspace_roots=("/ws",),
        platform="Linux 6",
        git="a git repository, branch main",
        instructions=(source,) if text is not None or error else (),
        skills=skills,
    )


def test_the_baseline_holds_folders_platform_date_git_instructions_and_skills() -> None:
    epoch = build_baseline(snap(skills="- lint: run the linter"), "2026-11-30")
    text = epoch.baseline
    for expected in (
        "Workspace folder: /ws",
        "Platform: Linux 6",
        "2026-11-30",
        "branch main",
        f'<instructions source="{AGENTS}">\nUse tabs.\n</instructions>',
        "- lint: run the linter",
    ):
        assert expected in text
    assert build_baseline(snap(skills="- lint: run the linter"), "2026-11-30") == epoch


def test_nothing_changed_means_no_note() -> None:
    epoch = build_baseline(snap(), "2026-11-30")
    assert changes(epoch, snap(), "2026-11-30") is None


def test_a_new_day_is_a_note() -> None:
    epoch = build_baseline(snap(), "2026-11-30")
    found = changes(epoch, snap(), "2026-12-01")
    assert found is not None
    note, after = found
    assert "The date is now 2026-12-01." in note
    assert after.date == "2026-12-01"
    assert after.baseline == epoch.baseline  # the system prompt never changes


def test_changed_instructions_are_sent_whole() -> None:
    epoch = build_baseline(snap(), "2026-11-30")
    note, after = changes(epoch, snap("Use spaces.\nAlways test."), "2026-11-30") or ("", epoch)
    assert "changed" in note
    assert "Use spaces.\nAlways test." in note
    assert after.instructions == {AGENTS: "Use spaces.\nAlways test."}


def test_an_unreadable_source_keeps_its_last_snapshot_and_a_removed_one_is_dropped() -> None:
    epoch = build_baseline(snap(), "2026-11-30")
    assert changes(epoch, snap(error="Is a directory"), "2026-11-30") is None
    note, after = changes(epoch, snap(None), "2026-11-30") or ("", epoch)
    assert "were removed" in note
    assert after.instructions == {}


def test_a_changed_skills_list_is_a_note() -> None:
    epoch = build_baseline(snap(), "2026-11-30")
    note, _ = changes(epoch, snap(skills="- new: a new skill"), "2026-11-30") or ("", epoch)
    assert "- new: a new skill" in note


def test_the_current_epoch_is_folded_from_the_log() -> None:
    epoch = build_baseline(snap(), "2026-11-30")
    found = changes(epoch, snap("v2"), "2026-12-01")
    assert found is not None
    note, after = found
    events = [
        StoredEvent(
            session_id="s",
            seq=1,
            type="context_built",
            data=encode(epoch.built()),
            time=iso_time(0),
        ),
        StoredEvent(
            session_id="s",
            seq=2,
            type="context_noted",
            data=encode(after.noted("msg_1", note)),
            time=iso_time(0),
        ),
    ]
    assert current_epoch(events[:1]) == epoch
    assert current_epoch(events) == after
    assert current_epoch([]) is None
