"""The watcher's start-up checks: every problem at once, in one Czech line.

The assistant reads the line only when the exit code says "bad start" (6), so it has to name
everything to fix in one go rather than one problem per restart.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from ..config import MIN_INTERVAL_MS, Config, ConfigError, load_config, parse_duration_ms, parse_hours
from ..errors import MailError
from ..gmail.endpoint import Endpoint, EndpointError, resolve_endpoint
from ..layout import AddonLayout
from ..mail.core.inputs import ACCEPTED_FORMS
from ..mail.core.inputs import since as parse_since

DEFAULT_INTERVAL_MS = 5 * 60_000
# Ends before Claude Code's 2 h limit for background commands, so the end reads as "restart".
DEFAULT_MAX_MS = 115 * 60_000


def one_line(text: str) -> str:
    return " ".join(text.split())


class WatchArgsError(Exception):
    """Bad start: `problems` are Czech, each already on one line."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = list(problems)

    @property
    def line(self) -> str:
        return "chyba: " + "; ".join(self.problems)


# The watcher's own options and what each says when its value is missing.
_VALUE_OPTIONS = {
    "--config": "--config potřebuje cestu k souboru s nastavením",
    "--since": "--since potřebuje hodnotu ve tvaru jmeno=kotva",
    "--interval": "--interval potřebuje dobu, třeba 5m",
    "--max": "--max potřebuje dobu, třeba 115m",
    "--hours": "--hours potřebuje rozsah hodin, třeba 9-19",
}


# `--follow` keeps running: it has no time limit unless `--max` gives one.
NO_LIMIT = math.inf
_MODES = ("--wait", "--follow")


@dataclass
class WatchArgv:
    """The watcher's command line, read without argparse: its errors would be English, on stderr, exit 2."""

    config: str | None = None
    since: list[str] = field(default_factory=list)
    interval: str | None = None
    max_time: str | None = None
    hours: str | None = None
    problems: list[str] = field(default_factory=list)  # Czech, for the one `chyba:` line
    ignored: list[str] = field(default_factory=list)  # unknown arguments, skipped as 1.5.0 did
    config_missing: bool = False  # `--config` without a path: no other file is tried in its place
    follow: bool = False  # `--follow`: one line per new mail, running on (Claude Code's Monitor)


def read_watch_argv(argv: Sequence[str]) -> WatchArgv:
    """Split the watcher's arguments; the last of a repeated option wins (except `--since`)."""
    result = WatchArgv()
    modes = [mode for mode in _MODES if mode in argv]
    result.follow = "--follow" in modes
    if len(modes) > 1:
        result.problems.append("--wait a --follow nejdou spolu: --wait skončí u první nové pošty, --follow hlídá dál")
    values: dict[str, str] = {}
    items = list(argv)
    i = 0
    while i < len(items):
        item = items[i]
        i += 1
        option, eq, inline = item.partition("=")
        if item in _MODES:
            continue
        if option not in _VALUE_OPTIONS:
            result.ignored.append(item)
            continue
        if eq:
            value: str | None = inline
        elif i < len(items) and not items[i].startswith("--"):
            value = items[i]
            i += 1
        else:
            value = None
        if value is None or not value.strip():
            result.problems.append(_VALUE_OPTIONS[option])
        elif option == "--since":
            result.since.append(value)
        else:
            values[option] = value
    result.config = values.get("--config")
    result.interval = values.get("--interval")
    result.max_time = values.get("--max")
    result.hours = values.get("--hours")
    result.config_missing = _VALUE_OPTIONS["--config"] in result.problems
    return result


@dataclass(frozen=True)
class WatchArgs:
    """What the watcher is started with, before any check: the command line's values as given."""

    config_path: Path | None  # None: the command line named no usable file (already one of `problems`)
    since: Sequence[str]
    interval: str | None
    max_time: str | None
    hours: str | None
    layout: AddonLayout | None
    environ: Mapping[str, str]
    problems: Sequence[str] = ()  # Czech, found on the command line already
    follow: bool = False


@dataclass(frozen=True)
class WatchPlan:
    config: Config
    endpoint: Endpoint
    watched: dict[str, datetime]  # mailbox → boundary, in the order the --since options came
    interval_s: float
    max_s: float
    hours: tuple[int, int] | None
    dropped: tuple[str, ...] = field(default=())  # --since of mailboxes without `watch`
    follow: bool = False


def _anchors(raw: Sequence[str], config: Config | None, problems: list[str]) -> dict[str, datetime]:
    anchors: dict[str, datetime] = {}
    seen: set[str] = set()
    for item in raw:
        name, sep, rest = item.partition("=")
        name, anchor = name.strip(), rest.strip()
        if not sep or not name:
            problems.append(f"„{one_line(item)[:60]}“ nemá tvar --since jmeno=kotva")
            continue
        if config is not None and config.account(name) is None:
            problems.append(
                f"--since jmenuje neznámou schránku „{name[:60]}“ (tvar --since jmeno=kotva, "
                f"schránky v nastavení: {', '.join(config.names())})"
            )
            continue
        if name in seen:
            problems.append(f"schránka {name} má --since dvakrát, kotva smí být jen jedna")
            continue
        seen.add(name)
        try:
            anchors[name] = parse_since(anchor)
        except MailError:
            problems.append(
                f"kotva „{one_line(anchor)[:60]}“ u schránky {name} není datum (čeká se jeden z tvarů "
                + ", ".join(f"„{form}“" for form in ACCEPTED_FORMS)
                + " – sekundy nejsou povinné, datum bez času je půlnoc UTC a čas bez pásma je UTC)"
            )
    return anchors


def _duration(label: str, text: str | None, default_ms: int, minimum_ms: int, hint: str, problems: list[str]) -> float:
    if text is None:
        return default_ms / 1000
    value = parse_duration_ms(text)
    if value is None or value < minimum_ms:
        problems.append(f"{label} „{one_line(text)[:40]}“ není platná doba, {hint}")
        return default_ms / 1000
    return value / 1000


def plan_watch(args: WatchArgs) -> WatchPlan:
    """Check everything the watcher is started with; raise WatchArgsError listing every problem."""
    config_path, since, hours, environ = args.config_path, args.since, args.hours, args.environ
    problems = list(args.problems)
    config: Config | None = None
    endpoint: Endpoint | None = None
    if config_path is None and not problems:
        problems.append("chybí cesta k souboru s nastavením")
    if config_path is not None:
        try:
            config = load_config(config_path, layout=args.layout, environ=environ)
        except ConfigError as error:
            problems.append(one_line(str(error)))
    try:
        endpoint = resolve_endpoint(environ)
    except EndpointError as error:
        problems.append(one_line(str(error)))

    anchors = _anchors(since, config, problems)
    watched = anchors
    dropped: tuple[str, ...] = ()
    if config is not None and not problems:
        flagged = [a.name for a in config.accounts if a.watch]
        if flagged:
            # A 1.3-style config says which mailboxes are watched; other anchors are not errors.
            problems.extend(
                f"chybí kotva pro hlídanou schránku {name} (--since {name}=kotva ze system/mail-kotva.md)"
                for name in flagged
                if name not in anchors
            )
            watched = {name: at for name, at in anchors.items() if name in flagged}
            dropped = tuple(name for name in anchors if name not in flagged)
        if not problems and not watched:
            problems.append(f"{'--follow' if args.follow else '--wait'} potřebuje aspoň jedno --since jmeno=kotva")

    config_interval = config.watch_interval_ms if config is not None else None
    interval_s = _duration(
        "--interval", args.interval, config_interval or DEFAULT_INTERVAL_MS, MIN_INTERVAL_MS,
        "čeká se třeba 5m, nejméně 1m", problems,
    )  # fmt: skip
    max_s = _duration("--max", args.max_time, DEFAULT_MAX_MS, 1, "čeká se doba delší než nula, třeba 115m", problems)
    if args.follow and args.max_time is None:
        max_s = NO_LIMIT
    window = config.watch_hours if config is not None else None
    if hours is not None:
        window = parse_hours(hours)
        if window is None:
            problems.append(f"--hours „{one_line(hours)[:40]}“ není rozsah hodin, čeká se třeba 9-19 nebo 22-6")

    if problems:
        raise WatchArgsError(problems)
    assert config is not None and endpoint is not None  # every failure above added a problem
    return WatchPlan(config, endpoint, watched, interval_s, max_s, window, dropped, args.follow)
