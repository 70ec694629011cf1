"""The corpus of public iCalendar files and invitation emails, read by the server and by the `icalendar` package.

Sources and licences: tests/corpus/icalendar/SOURCES.md. Known differences, each with its reason:
tests/corpus/icalendar/differences.toml.
"""

from __future__ import annotations

import tomllib
import warnings
from collections import Counter

import pytest

from mcp_multi_gmail.gmail.parse.calevent import read_event
from mcp_multi_gmail.gmail.parse.icalendar import CalendarError
from support.calendars import CORPUS, calendar_parts, corpus_files, differences, readings


def test_the_corpus_is_large_and_from_several_projects() -> None:
    files = corpus_files()
    projects = Counter(path.relative_to(CORPUS).parts[0] for path in files)
    assert len(files) >= 150
    assert len(projects) >= 3, projects


def test_every_file_reads_or_says_why() -> None:
    reasons: list[str] = []
    for path in corpus_files():
        for data, charset in calendar_parts(path):
            try:
                read_event(data, charset, frozenset())
            except CalendarError as error:  # anything else escaping fails the test
                reasons.append(str(error))
    assert all(reasons)


def test_readings_agree_with_the_reference_but_for_the_known_differences() -> None:
    pytest.importorskip("icalendar")
    known = tomllib.loads((CORPUS / "differences.toml").read_text(encoding="utf-8"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the reference warns about the odd files it is fed
        found = differences()
    assert {name: sorted(fields) for name, fields in found.items()} == {
        name: sorted(reasons) for name, reasons in known.items()
    }


def test_recurrence_is_compared_with_dateutil_over_every_file_with_a_rule() -> None:
    pytest.importorskip("icalendar")
    pytest.importorskip("dateutil")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both = [(mine, theirs) for mine, theirs in readings().values() if mine is not None and theirs is not None]
    ruled = [(mine, theirs) for mine, theirs in both if mine["recurrence"] or theirs["recurrence"]]
    excepted = [(mine, theirs) for mine, theirs in both if mine["excepted_dates"] or theirs["excepted_dates"]]
    # The corpus's rules (116 files) and EXDATEs (15 files) are many; the per-file verdict is
    # test_readings_agree_with_the_reference_but_for_the_known_differences.
    assert len(ruled) >= 100 and len(excepted) >= 10
    assert sum(mine["recurrence"] == theirs["recurrence"] for mine, theirs in ruled) >= len(ruled) - 5
