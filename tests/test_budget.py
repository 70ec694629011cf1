"""The result budget's measuring and cutting helpers (mail/budget.py), on values built to be hard."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from mcp_multi_gmail.mail import budget


def compact_size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def test_fit_text_counts_escapes_not_characters() -> None:
    text = 'a"\\\n\tž\x01' * 1000  # quotes, backslashes and controls take 2 or 6 characters in JSON
    for room in (0, 1, 5, 6, 7, 99, 1000, 12_345):
        cut = budget.fit_text(text, room)
        assert text.startswith(cut) and budget.json_length(cut) <= room
        longer = text[: len(cut) + 1]
        assert len(cut) == len(text) or budget.json_length(longer) > room, "the longest beginning that fits"
    assert budget.fit_text("krátký", 100) == "krátký"


def test_longest_page_is_the_most_items_that_fit() -> None:
    items = [{"text": "x" * (i * 37 % 900)} for i in range(200)]
    for limit in (500, 5_000, 40_000, 10**6):
        count = budget.longest_page(lambda k: {"items": items[:k]}, len(items), limit)
        assert 1 <= count <= len(items)
        assert count == 1 or compact_size({"items": items[:count]}) <= limit
        assert count == len(items) or compact_size({"items": items[: count + 1]}) > limit
    assert budget.longest_page(lambda k: {"items": items[:k]}, 0) == 0


def test_fit_page_answers_the_longest_page_and_builds_a_whole_page_once() -> None:
    items = [{"text": "x" * 500} for _ in range(200)]
    built: list[int] = []

    def result_for(k: int) -> dict[str, Any]:
        built.append(k)
        return {"items": items[:k]}

    page = budget.fit_page(result_for, len(items))
    assert page == {"items": items[: budget.longest_page(lambda k: {"items": items[:k]}, len(items))]}
    assert len(page["items"]) < len(items) and budget.size(page) <= budget.RESULT_BUDGET
    built.clear()
    assert budget.fit_page(result_for, 3) == {"items": items[:3]}
    assert built == [3], "a page that fits whole is built once, not again for the answer"


class Inner(BaseModel):
    name: str
    tags: list[str]


class Outer(BaseModel):
    title: str
    inner: list[Inner]
    count: int


def test_shrink_cuts_until_it_fits_and_keeps_the_schema() -> None:
    big = Outer(
        title="Předmět " * 3_000,
        inner=[Inner(name=f"n{i}", tags=["štítek" * 20] * 30) for i in range(100)],
        count=7,
    )
    assert budget.size(big) > budget.RESULT_BUDGET
    small = budget.shrink(big)
    assert budget.size(small) <= budget.RESULT_BUDGET
    assert isinstance(small, Outer) and small.count == 7
    assert small.title.endswith(budget.CUT_MARK) or small.title == big.title
    assert [i.name for i in small.inner] == [f"n{i}" for i in range(len(small.inner))], "lists lose their tail"
    assert budget.shrink(small) is small, "a result within the budget is returned as it is"


def test_with_text_leaves_room_for_the_text() -> None:
    crowded = Outer(title="", inner=[Inner(name="a" * 500, tags=["b" * 100] * 10) for _ in range(100)], count=1)
    text = "Tělo zprávy.\n" * 10_000
    fitted = budget.with_text(crowded, "title", text)
    assert budget.size(fitted) <= budget.RESULT_BUDGET
    assert text.startswith(fitted.title) and budget.json_length(fitted.title) >= budget.BODY_ROOM - 50


class _Item(BaseModel):
    text: str
    sender: str = ""


class _Page(BaseModel):
    title: str
    items: list[_Item]
    next_page_token: str | None = None


def test_fit_list_page_measures_the_same_sizes_as_whole_pages() -> None:
    # Escapes, non-ASCII and items of every size: adding up the items' lengths must give exactly the
    # length of the whole page, or the page would end elsewhere.
    items = [_Item(text='ž"\\\n\x01' * (i * 53 % 700), sender="Jiří") for i in range(60)]

    def result_for(k: int) -> _Page:
        return _Page(title="Přehled", items=items[:k], next_page_token=f"t{k}" * (k % 3) if k < len(items) else None)

    for count in (0, 1, 2, 7, 60):
        exact = budget.fit_page(result_for, count)
        added = budget.fit_list_page(result_for, count, "items")
        assert budget.compact(budget.dumped(added)) == budget.compact(budget.dumped(exact))
    assert len(budget.fit_list_page(result_for, 60, "items").items) < 60, "the budget ended the page"
