"""Durations (`watch_interval`, `--interval`, `--max`) and hour windows (`watch_hours`, `--hours`)."""

from __future__ import annotations

import re

# The shortest poll interval the watcher accepts (one minute).
MIN_INTERVAL_MS = 60_000

_DURATION = re.compile(r"^\s*(\d+(?:[.,]\d+)?)\s*([smhSMH]?)\s*$")
_UNIT_MS = {"s": 1_000, "m": 60_000, "h": 3_600_000, "": 60_000}  # no unit = minutes
_HOURS = re.compile(r"^\s*(\d{1,2})\s*-\s*(\d{1,2})\s*$")


def parse_duration_ms(text: str) -> int | None:
    """`"5m"` → 300000, `"90s"`, `"2h"`, `"1.5h"`, `"10"` (minutes); None when unreadable.

    Range checks (at least a minute, more than zero) are the caller's business.
    """
    match = _DURATION.match(text)
    if match is None:
        return None
    number = float(match.group(1).replace(",", "."))  # a Czech decimal comma is accepted too
    return round(number * _UNIT_MS[match.group(2).lower()])


def parse_hours(text: str) -> tuple[int, int] | None:
    """`"9-19"` → (9, 19); wrap-around `"22-6"` allowed; both ≤ 24 and different, else None."""
    match = _HOURS.match(text)
    if match is None:
        return None
    start, end = int(match.group(1)), int(match.group(2))
    if start > 24 or end > 24 or start == end:
        return None
    return start, end


_AGE = re.compile(r"^\s*(\d+(?:[.,]\d+)?)\s*([dhDH]?)\s*$")


def parse_age_s(text: str) -> int | None:
    """`"3d"` → 259200, `"36h"`, `"2.5d"`, `"3"` (days); None when unreadable."""
    match = _AGE.match(text)
    if match is None:
        return None
    number = float(match.group(1).replace(",", "."))
    return round(number * (3_600 if match.group(2).lower() == "h" else 86_400))
