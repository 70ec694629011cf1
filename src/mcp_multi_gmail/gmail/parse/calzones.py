"""Time zones of an iCalendar file, as a calendar program resolves them.

A TZID is looked up, in this order (RFC 5545 §3.2.19, §3.6.5):
1. in the system's IANA database (`zoneinfo`), also behind a path prefix
   (`/mozilla.org/20050126_1/Europe/Berlin`);
2. as a Windows zone name (`FLE Standard Time`) through CLDR's windowsZones mapping, shipped as
   `data/windows_zones.json` (source and licence in NOTICE), then in the IANA database;
3. through the file's own VTIMEZONE: its STANDARD and DAYLIGHT observances with their onsets
   (DTSTART, yearly RRULE by BYMONTH/BYDAY or BYMONTHDAY, RDATE) and offsets.
Without a zone database (zoneinfo raising, as on Windows without tzdata) step 3 still works.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo
from functools import lru_cache
from importlib import resources
from typing import Literal

ZoneSource = Literal["utc", "iana", "windows", "vtimezone"]

_OFFSET = re.compile(r"^([+-])(\d{2})(\d{2})(\d{2})?$")
_BYDAY = re.compile(r"^([+-]?\d{1,2})?(MO|TU|WE|TH|FR|SA|SU)$")
_WEEKDAYS = {"MO": 0, "TU": 1, "WE": 2, "TH": 3, "FR": 4, "SA": 5, "SU": 6}


@dataclass(frozen=True)
class Observance:
    """One STANDARD or DAYLIGHT block: from its onsets on, clocks read UTC + offset_to."""

    start: datetime  # DTSTART, local time before the change
    offset_from: timedelta
    offset_to: timedelta
    rule: dict[str, str] | None  # RRULE parts, yearly rules only
    rdates: tuple[datetime, ...]
    name: str | None


@dataclass(frozen=True)
class Zone:
    """A resolved TZID: an IANA tzinfo, or the offsets of the file's own VTIMEZONE."""

    tzid: str
    source: ZoneSource
    iana: str | None
    tz: tzinfo | None = None
    observances: tuple[Observance, ...] = ()

    def offset(self, local: datetime) -> timedelta | None:
        """UTC offset at a local wall-clock time (the earlier reading of a repeated hour)."""
        if self.tz is not None:
            return self.tz.utcoffset(local.replace(tzinfo=None))
        return _observed_offset(self.observances, local)


def parse_offset(text: str) -> timedelta | None:
    """A UTC-OFFSET value: +0100, -0330, +013045."""
    match = _OFFSET.match(text.strip())
    if not match:
        return None
    sign, hours, minutes, seconds = match.groups()
    delta = timedelta(hours=int(hours), minutes=int(minutes), seconds=int(seconds or 0))
    return -delta if sign == "-" else delta


@lru_cache(maxsize=1)
def windows_zones() -> dict[str, str]:
    """CLDR's Windows zone names (territory 001) to IANA names."""
    text = (resources.files("mcp_multi_gmail") / "data" / "windows_zones.json").read_text(encoding="utf-8")
    table: dict[str, str] = json.loads(text)
    return {name.casefold(): iana for name, iana in table.items() if not name.startswith("_")}


@lru_cache(maxsize=512)
def iana_zone(name: str) -> tzinfo | None:
    """The IANA zone of that name, or None (unknown name, or no zone database at all)."""
    if not name or name.startswith(("/", ".")) or ".." in name or "\\" in name:
        return None
    try:
        from zoneinfo import ZoneInfo

        return ZoneInfo(name)
    except (KeyError, ValueError, OSError, ImportError):  # ZoneInfoNotFoundError is a KeyError; no tzdata
        return None


def _iana_candidates(tzid: str) -> list[str]:
    """The TZID itself, then its last two and three path segments (vendor prefixes)."""
    name = tzid.strip().strip('"')
    parts = [part for part in name.split("/") if part]
    candidates = [name, "/".join(parts)]
    for count in (3, 2):
        if len(parts) > count:
            candidates.append("/".join(parts[-count:]))
    return candidates


def resolve(tzid: str, vtimezones: dict[str, tuple[Observance, ...]]) -> Zone | None:
    """The zone a TZID names, or None when no step finds it (the caller says timezone_unknown)."""
    name = tzid.strip().strip('"')
    if name.upper() in {"UTC", "GMT", "Z", "ETC/UTC", "ETC/GMT"}:
        return Zone(name, "utc", "UTC", UTC)
    for candidate in _iana_candidates(name):
        found = iana_zone(candidate)
        if found is not None:
            return Zone(name, "iana", candidate, found)
    windows = windows_zones().get(name.casefold())
    if windows is not None:
        found = iana_zone(windows)
        if found is not None:
            return Zone(name, "windows", windows, found)
    observances = vtimezones.get(name) or vtimezones.get(tzid)
    if observances:
        return Zone(name, "vtimezone", windows, None, observances)
    return None


def _nth_weekday(year: int, month: int, weekday: int, nth: int) -> date | None:
    if nth > 0:
        first = date(year, month, 1)
        day = first + timedelta(days=(weekday - first.weekday()) % 7 + 7 * (nth - 1))
    else:
        following = date(year + (month == 12), month % 12 + 1, 1)
        last = following - timedelta(days=1)
        day = last - timedelta(days=(last.weekday() - weekday) % 7 + 7 * (-nth - 1))
    return day if day.month == month else None


def _onset_in(observance: Observance, year: int) -> datetime | None:
    """The observance's onset in one year, by its yearly rule."""
    rule = observance.rule
    if not rule or rule.get("FREQ") != "YEARLY":
        return None
    start = observance.start
    if year < start.year:
        return None
    until = rule.get("UNTIL")
    month = int(rule.get("BYMONTH", str(start.month)).split(",")[0])
    day: date | None
    if "BYDAY" in rule:
        match = _BYDAY.match(rule["BYDAY"].split(",")[0].strip())
        if not match:
            return None
        nth = int(match.group(1) or 1)
        day = _nth_weekday(year, month, _WEEKDAYS[match.group(2)], nth)
    else:
        try:
            day = date(year, month, int(rule.get("BYMONTHDAY", str(start.day)).split(",")[0]))
        except ValueError:
            return None
    if day is None:
        return None
    onset = datetime.combine(day, start.time())
    if until and onset.strftime("%Y%m%dT%H%M%S") > until.rstrip("Z")[:15].ljust(15, "0"):
        return None
    return onset


def _observed_offset(observances: tuple[Observance, ...], local: datetime) -> timedelta | None:
    """The offset of the observance whose latest onset is at or before `local`."""
    best: tuple[datetime, Observance] | None = None
    naive = local.replace(tzinfo=None)
    for observance in observances:
        onsets = [observance.start, *observance.rdates]
        for year in (naive.year - 1, naive.year):
            onset = _onset_in(observance, year)
            if onset is not None:
                onsets.append(onset)
        for onset in onsets:
            if onset <= naive and (best is None or onset > best[0]):
                best = (onset, observance)
    if best is not None:
        return best[1].offset_to
    if observances:  # before every onset: the time before the earliest one
        return min(observances, key=lambda item: item.start).offset_from
    return None
