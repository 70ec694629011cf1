"""The result budget's measuring and cutting helpers (mail/core/budget.py), on values built to be hard."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from mcp_multi_gmail.mail.core import budget


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
    fitted = budget.with_text(crowded, text, lambda model, title: model.model_copy(update={"title": title}))
    assert budget.size(fitted) <= budget.RESULT_BUDGET
    assert text.startswith(fitted.title) and budget.json_length(fitted.title) >= budget.BODY_ROOM - 50


def test_with_text_keeps_only_the_room_a_short_text_needs() -> None:
    crowded = Outer(title="", inner=[Inner(name="a" * 500, tags=["b" * 100] * 10) for _ in range(100)], count=1)
    fitted = budget.with_text(crowded, "Krátké tělo.", lambda model, title: model.model_copy(update={"title": title}))
    assert fitted.title == "Krátké tělo."
    # Within one item (about 1 500 characters) of the budget: the others keep what the text does not
    # need (a reserve of BODY_ROOM would have left them 30 000).
    assert budget.size(fitted) > budget.RESULT_BUDGET - 1_600 > budget.RESULT_BUDGET - budget.BODY_ROOM


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


# ---------------------------------------------------------------- what shrink cut, in `cut`


class _Person(BaseModel):
    name: str
    address: str


class _Message(BaseModel):
    subject: str
    to: list[_Person]
    cc: list[_Person]


class _Result(BaseModel):
    title: str
    messages: list[_Message]
    cut: list[budget.Cut] = budget.cut_field()


def _people(role: str, count: int) -> list[_Person]:
    return [_Person(name=f"Zaměstnanec {role} {i}", address=f"{role}.{i}@firma.example.cz") for i in range(count)]


def test_shrink_names_every_cut_with_its_true_total() -> None:
    result = _Result(
        title="Oznámení " * 2_000,
        messages=[_Message(subject="Pro všechny", to=_people("to", 2_000), cc=_people("cc", 1_000))],
    )
    small = budget.shrink(result, tool="mg_get_thread")
    assert budget.size(small) <= budget.RESULT_BUDGET
    cuts = {c.field: c for c in small.cut}
    assert set(cuts) == {"title", "messages.0.to", "messages.0.cc"}
    assert (cuts["messages.0.to"].shown, cuts["messages.0.to"].total) == (len(small.messages[0].to), 2_000)
    assert (cuts["messages.0.cc"].shown, cuts["messages.0.cc"].total) == (len(small.messages[0].cc), 1_000)
    assert cuts["title"].total == len(result.title)
    assert cuts["title"].shown == len(small.title) - len(budget.CUT_MARK) and small.title.endswith(budget.CUT_MARK)
    # Both long lists keep a part: the cut takes the largest down to the next one, not to one item.
    assert len(small.messages[0].to) > 100 and len(small.messages[0].cc) > 100
    assert all("mg_get_thread" in c.how_to_get_the_rest for c in small.cut)
    assert all(c.shown < c.total for c in small.cut)


def test_shrink_never_cuts_the_cut_list_and_keeps_earlier_entries() -> None:
    earlier = [budget.Cut(field=f"x{i}", shown=1, total=2, how_to_get_the_rest="y" * 100) for i in range(10)]
    result = _Result(title="t", messages=[_Message(subject="s", to=_people("to", 3_000), cc=[])], cut=earlier)
    small = budget.shrink(result)
    assert budget.size(small) <= budget.RESULT_BUDGET
    assert small.cut[:10] == earlier and [c.field for c in small.cut[10:]] == ["messages.0.to"]


def test_many_cut_lists_are_merged_and_the_result_still_fits() -> None:
    # 50 messages, each with a cc list the budget cannot hold: 50 entries would crowd the result,
    # so the entries of one list in every message become one, with the counts added up.
    result = _Result(
        title="t", messages=[_Message(subject=f"m{i}", to=_people("to", 2), cc=_people("cc", 60)) for i in range(50)]
    )
    small = budget.shrink(result, tool="mg_next_pass")
    assert budget.size(small) <= budget.RESULT_BUDGET
    by_field = {c.field: c for c in small.cut}
    kept = small.messages
    listed = sum(len(m.cc) for m in kept)
    cc = by_field["messages.*.cc"]
    assert cc.shown == listed and cc.total == 60 * len(kept), "counts over the messages still shown"
    assert budget.size([c.model_dump() for c in small.cut]) <= budget.CUT_ROOM


def test_merged_keeps_few_entries_as_they_are() -> None:
    few = [budget.Cut(field="messages.0.cc", shown=3, total=9, how_to_get_the_rest="none")]
    assert budget.merged(few) == few
    many = [
        budget.Cut(field=f"messages.{i}.cc", shown=i, total=100, how_to_get_the_rest=f"call {i}") for i in range(99)
    ]
    [one] = budget.merged(many)
    assert (one.field, one.shown, one.total) == ("messages.*.cc", sum(range(99)), 9_900)
    assert one.how_to_get_the_rest.startswith("99 of these were cut") and "call 0" in one.how_to_get_the_rest


def test_a_pass_thread_cut_by_the_budget_points_at_mg_get_thread() -> None:
    from mcp_multi_gmail.domain import Address
    from mcp_multi_gmail.mail.work.pass_ import PassMessage, PassResult, PassThread

    def message(index: int) -> PassMessage:
        sender = Address(name="Jana", address="jana@example.cz")
        return PassMessage(
            account="osobni", message_id=f"m{index}@example.cz", from_=sender, to=[sender], cc=[],
            received_at=None, state="received", in_inbox=True, preview="Náhled zprávy. " * 20,
        )  # fmt: skip

    thread = PassThread(
        account="osobni", thread_id="1849", subject="Dlouhé vlákno", message_count=400, last_received_at=None,
        classification=[], user_labels=[], assigned=None, unprocessed=[message(i) for i in range(400)],
        pending_outgoing=[],
    )  # fmt: skip
    result = PassResult(
        searched_at="", since="", threads=[thread], total_threads=1, next_page_token=None, stale_threads=0,
        drafts_in_window=0, scheduled_in_window=0, outside_scope_in_window=0, oldest_unprocessed_at=None,
        window_clear=False, searched=["osobni"], failures=[], index_stale_hits=0,
    )  # fmt: skip
    small = budget.shrink(result, tool="mg_next_pass")
    assert budget.size(small) <= budget.RESULT_BUDGET
    [entry] = small.cut
    assert entry.field == "threads.0.unprocessed" and entry.total == 400
    assert entry.shown == len(small.threads[0].unprocessed) < 400
    assert entry.how_to_get_the_rest == "mg_get_thread with thread_id=1849 lists every message of the thread"
