"""The user's calendar: which zone a date such as "2026-12-07" is read in.

The machine's local zone by default, or an IANA name (`timezone`) where the system has the zone
database (the runtime dependencies stay four: no tzdata wheel). Without the database only the
local zone is offered, and the configuration check says so.
"""

from __future__ import annotations

import zoneinfo
from dataclasses import dataclass
from datetime import UTC, date, datetime


def has_zone_database() -> bool:
    try:
        zoneinfo.ZoneInfo("Europe/Prague")
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return False
    return True


def zone_problem(name: str) -> str | None:
    """Czech: why `timezone` cannot be used, or None."""
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        if not has_zone_database():
            return (
                f'"timezone" je "{name}", ale tento systém nemá databázi časových pásem; '
                'lze použít jen místní čas počítače: "timezone" vynechte'
            )
        return f'"timezone" je "{name}", takové časové pásmo neznám; čeká se třeba "Europe/Prague"'
    return None


@dataclass(frozen=True)
class UserZone:
    """The user's zone: an IANA name, or None for the machine's local zone (the C library's rules)."""

    name: str | None = None

    def local(self, moment: datetime) -> datetime:
        """An aware moment as the user's wall clock shows it (aware, with that moment's offset)."""
        return moment.astimezone(zoneinfo.ZoneInfo(self.name)) if self.name else moment.astimezone()

    def moment(self, wall: datetime) -> datetime:
        """A naive wall-clock time of the user's calendar as an aware UTC moment (a time skipped by a
        daylight-saving change is read with the offset before it, as RFC 5545 section 3.3.5 does)."""
        if self.name:
            return wall.replace(tzinfo=zoneinfo.ZoneInfo(self.name)).astimezone(UTC)
        return wall.astimezone().astimezone(UTC)

    def today(self, now: datetime) -> date:
        return self.local(now).date()

    def start_of(self, day: date) -> datetime:
        """Midnight of a calendar day in the user's zone, as an aware UTC moment."""
        return self.moment(datetime.combine(day, datetime.min.time()))


def zone_line(name: str | None) -> str:
    """Czech, for --check-config: which calendar the reminder dates are read in."""
    if name is not None:
        return f"Data připomínek: časové pásmo {name}."
    if not has_zone_database():
        return (
            "Data připomínek: místní čas počítače. Tento systém nemá databázi časových pásem, "
            "jiné pásmo („timezone“) proto nastavit nelze."
        )
    return 'Data připomínek: místní čas počítače (jiné pásmo nastaví klíč "timezone", např. "Europe/Prague").'
