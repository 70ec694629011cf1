"""The token life cycle's rules on a record's body: planned -> applied -> used, nothing out of used,
one holder at a time, a dead or expired holder holds nothing, old records read as what they meant."""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta
from typing import Any

import pytest

from mcp_multi_gmail.errors import MailError
from mcp_multi_gmail.mail.undo import records, tokens


def take(record: dict[str, Any]) -> str:
    return tokens.hold(record, busy="busy", used="used")


def refused(record: dict[str, Any]) -> str:
    with pytest.raises(MailError) as caught:
        take(record)
    return caught.value.message


def test_planned_applied_used_and_never_back() -> None:
    record: dict[str, Any] = {"state": tokens.PLANNED}
    mine = take(record)
    assert refused(record) == "busy"  # a second call, in this process
    tokens.settle(record)
    assert tokens.state(record) == tokens.APPLIED and "holder" not in record
    mine = take(record)
    tokens.use(record)
    assert tokens.state(record) == tokens.USED and refused(record) == "used"
    tokens.settle(record)  # a late settle of the write does not reopen it
    tokens.let_go(record, mine)
    assert tokens.state(record) == tokens.USED and refused(record) == "used"


def test_only_the_holder_lets_go() -> None:
    record: dict[str, Any] = {"state": tokens.APPLIED}
    mine = take(record)
    tokens.let_go(record, "someone else")
    assert refused(record) == "busy"
    tokens.let_go(record, mine)
    assert tokens.state(record) == tokens.APPLIED and take(record)


def test_a_dead_or_expired_holder_holds_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    record: dict[str, Any] = {"state": tokens.PLANNED}
    take(record)
    record["holder"]["pid"] = gone.pid  # a process that has ended (SIGKILL'd, say)
    assert not tokens.held(record) and take(record)
    real = records.now
    monkeypatch.setattr(records, "now", lambda: real() + tokens.LEASE + timedelta(seconds=1))
    assert not tokens.held(record) and take(record)


def test_old_records_read_as_what_they_meant() -> None:
    assert tokens.state({"state": "completed"}) == tokens.APPLIED
    assert tokens.state({"state": "reserved"}) == tokens.PLANNED
    assert tokens.state({"used": True}) == tokens.USED  # a sweep preview of the earlier format
    assert tokens.state({"used": False}) == tokens.PLANNED


def test_a_holder_on_another_host_holds_until_its_lease_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    # Its process cannot be looked at from here: only its lease says whether it still works.
    record: dict[str, Any] = {"state": tokens.PLANNED}
    take(record)
    record["holder"] |= {"host": "another-host.example", "pid": 1}
    assert tokens.held(record) and refused(record) == "busy"
    until = records.parse_stamp(record["holder"]["until"])
    monkeypatch.setattr(records, "now", lambda: until - timedelta(seconds=1))
    assert refused(record) == "busy"
    monkeypatch.setattr(records, "now", lambda: until)  # the lease has ended
    assert not tokens.held(record) and take(record)


@pytest.mark.parametrize(
    "holder",
    ["someone", {"id": "ab"}, {"id": "ab", "pid": 1, "host": "h", "until": "soon"}, {"pid": "x", "until": None}],
)
def test_a_holder_that_does_not_read_holds_nothing(holder: object) -> None:
    # A damaged or foreign holder must not lock the token for good.
    record: dict[str, Any] = {"state": tokens.APPLIED, "holder": holder}
    assert not tokens.held(record) and take(record)
