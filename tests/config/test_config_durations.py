"""Durations and hour windows (watch_interval, --interval, --max, watch_hours, --hours)."""

from __future__ import annotations

import pytest

from mcp_multi_gmail.config import parse_duration_ms, parse_hours


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("5m", 300_000),
        ("90s", 90_000),
        ("2h", 7_200_000),
        ("10", 600_000),  # no unit = minutes
        ("1.5h", 5_400_000),
        ("1,5h", 5_400_000),
        (" 5 m ", 300_000),
        ("0.5s", 500),
        ("0", 0),
        ("pět", None),
        ("", None),
        ("5d", None),
        ("-5m", None),
        ("5mm", None),
        ("1.h", None),
    ],
)
def test_parse_duration_ms(text: str, expected: int | None) -> None:
    assert parse_duration_ms(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("9-19", (9, 19)),
        ("22-6", (22, 6)),
        ("9 - 19", (9, 19)),
        ("0-24", (0, 24)),
        ("9", None),
        ("25-3", None),
        ("3-25", None),
        ("9-9", None),
        ("9-", None),
        ("devět-19", None),
        ("100-2", None),
    ],
)
def test_parse_hours(text: str, expected: tuple[int, int] | None) -> None:
    assert parse_hours(text) == expected
