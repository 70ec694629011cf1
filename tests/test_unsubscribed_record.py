"""The record of lists left (mail/subscriptions/unsubscribed.py) across server processes: the look for an earlier
claim and the claim itself are one step under the state folder's file lock, so of several processes
that claim one list at the same moment exactly one gets it (issue 41)."""

from __future__ import annotations

import multiprocessing
import os
from dataclasses import replace
from pathlib import Path

import pytest

from mcp_multi_gmail.mail.subscriptions.unsubscribed import Left, LeftLists

PROCESSES = 6
CLAIM = Left("o", "list:deals.shop.example", "https://news.example/unsubscribe", "one_click", "", None, "shop.example")


def _claim_at_once(
    folder: str, start: multiprocessing.synchronize.Barrier, answers: multiprocessing.Queue[str]
) -> None:
    entry = replace(CLAIM, at=f"2026-12-06T10:00:0{os.getpid() % 10}Z", pending=True)
    start.wait(timeout=30)
    earlier = LeftLists(Path(folder)).claim(entry, force=False)
    answers.put("claimed" if earlier is None else "refused")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks the processes that race")
def test_of_processes_that_claim_one_list_at_once_exactly_one_gets_it(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")
    start = context.Barrier(PROCESSES)
    answers: multiprocessing.Queue[str] = context.Queue()
    racers = [context.Process(target=_claim_at_once, args=(str(tmp_path), start, answers)) for _ in range(PROCESSES)]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join(timeout=60)
        assert racer.exitcode == 0
    assert sorted(answers.get(timeout=5) for _ in range(PROCESSES)) == ["claimed"] + ["refused"] * (PROCESSES - 1)
    [entry] = LeftLists(tmp_path).of_account("o")
    assert entry.pending is True and entry.list == CLAIM.list and entry.signer == "shop.example"


def test_a_claim_is_settled_or_taken_back_and_another_signer_is_another_list(tmp_path: Path) -> None:
    left = LeftLists(tmp_path)
    claim = replace(CLAIM, at="2026-12-06T10:00:00Z", pending=True)
    assert left.claim(claim, force=False) is None
    assert left.claim(replace(claim, at="2026-12-06T10:00:01Z"), force=False) == claim
    # The same List-Id vouched for by another domain is another list.
    other = replace(claim, signer="evil.example")
    assert left.claim(other, force=False) is None
    left.settle(other, None)  # nothing went out: taken back
    left.settle(claim, replace(claim, pending=False, status=200))
    assert [(e.signer, e.pending, e.status) for e in left.of_account("o")] == [("shop.example", False, 200)]
    assert left.find("o", CLAIM.list, "evil.example") is None
    # Forced: a second record beside the first, the newest found.
    again = replace(claim, at="2026-12-06T11:00:00Z")
    assert left.claim(again, force=True) is None and left.find("o", CLAIM.list, "shop.example") == again


def test_calls_under_way_for_several_lists_each_settle_their_own_claim(tmp_path: Path) -> None:
    """Claims of three lists stand in the record at once (three calls under way); each call settles or
    takes back its own, wherever it stands, and the others stay as they were."""
    left = LeftLists(tmp_path)
    lists = ["list:deals.shop.example", "list:tips.garden.example", "list:news.town.example"]
    deals, tips, town = (replace(CLAIM, list=name, at="2026-12-06T10:00:00Z", pending=True) for name in lists)
    for claim in (deals, tips, town):
        assert left.claim(claim, force=False) is None
    left.settle(deals, replace(deals, at="2026-12-06T10:00:05Z", pending=False, status=200))
    assert [(e.list, e.pending, e.status) for e in left.of_account("o")] == [
        (tips.list, True, None),
        (town.list, True, None),
        (deals.list, False, 200),
    ]
    left.settle(tips, None)
    assert [(e.list, e.pending) for e in left.of_account("o")] == [(town.list, True), (deals.list, False)]
