"""The result budget: every tool result fits inline in the assistant's context.

Claude Code hands the model a tool's `structuredContent` as compact JSON and, above about
25 000 tokens (characters / 4) or 50 000 characters, a "saved to a file" notice instead of the
result (docs/en/tools.md, "Result budget"). So every result is kept at or under
RESULT_BUDGET characters of compact JSON, measured here, never estimated per field: pages stop
adding threads or messages when the next one would not fit, body windows end where the budget
does, and a last-resort `shrink` cuts whatever a pathological mailbox still makes too large.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from itertools import accumulate
from typing import Any, TypeVar

from pydantic import BaseModel, Field

RESULT_BUDGET = 40_000
# A body window always keeps at least this much of the budget: when a message's other fields
# (recipients, attachments) take more, they are cut instead, so reading on always advances.
BODY_ROOM = 10_000
# What a cut string ends with, so a reader sees that it is not the whole value.
CUT_MARK = "…[cut]"

# The budget's number as descriptions write it ("40 000"), and as the result fields name it:
# "40 000-character budget". Tool descriptions write "{budget}" where the number goes (tools/common).
BUDGET_NUMBER = f"{RESULT_BUDGET:,}".replace(",", " ")
BUDGET_WORDS = f"{BUDGET_NUMBER}-character budget"
# What a page of threads holds when the budget ended it (mg_search_threads, mg_next_pass).
FEWER_THREADS = (
    f"the result reached its {BUDGET_WORDS} before the page was full, so it holds fewer threads than asked for; "
    "next_page_token continues with the rest"
)

M = TypeVar("M", bound=BaseModel)
R = TypeVar("R")


def compact(value: Any) -> str:
    """JSON exactly as the assistant receives it: no spaces, non-ASCII as it is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def dumped(value: Any) -> Any:
    """A model as its structuredContent (the SDK dumps results this way); anything else unchanged."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    return value


def size(value: Any) -> int:
    """Characters of compact JSON of a model (as structuredContent) or of a JSON-able value."""
    return len(compact(dumped(value)))


def json_length(text: str) -> int:
    """Characters a string takes inside JSON, without its quotes (escapes counted)."""
    return len(compact(text)) - 2


def fit_text(text: str, room: int) -> str:
    """The longest beginning of `text` that takes at most `room` characters as a JSON string."""
    if room <= 0:
        return ""
    if json_length(text) <= room:
        return text
    low, high = 0, min(len(text), room)  # an escape never makes a character shorter
    while low < high:
        middle = (low + high + 1) // 2
        if json_length(text[:middle]) <= room:
            low = middle
        else:
            high = middle - 1
    return text[:low]


def longest_page(result_for: Callable[[int], Any], count: int, budget: int = RESULT_BUDGET) -> int:
    """The most items (1..count) whose result `result_for(k)` fits the budget.

    At least one item when there is any: a page of none could not move its cursor on, so a single
    item that is too large alone is left for `shrink`. Sizes grow with k (each item adds its own
    characters), so a binary search finds the point."""
    return _longest(lambda k: size(result_for(k)), count, budget)


def _longest(size_of: Callable[[int], int], count: int, budget: int) -> int:
    """longest_page over `size_of(k)`, the size of the page of k items."""
    if count <= 0:
        return 0
    if size_of(count) <= budget:
        return count
    low, high = 1, count - 1
    while low < high:
        middle = (low + high + 1) // 2
        if size_of(middle) <= budget:
            low = middle
        else:
            high = middle - 1
    return low


def fit_page(result_for: Callable[[int], R], count: int) -> R:
    """`result_for(k)` for the longest page k that fits (as longest_page finds it). The pages
    measured on the way are kept, so the answer is not built a second time: a page that fits
    whole, the common case, is built once."""
    built: dict[int, R] = {}

    def build(k: int) -> R:
        built[k] = result_for(k)
        return built[k]

    k = longest_page(build, count)
    return built[k] if k in built else result_for(k)


def fit_list_page(result_for: Callable[[int], M], count: int, field: str) -> M:
    """fit_page for a model whose page of k items holds the first k of the list `field` (items of
    exactly the list's declared model), measured without serialising every page it tries.

    Compact JSON of a list is its items' JSON joined by commas between brackets, so a page's size
    is the size of the page with the list empty, plus its items' sizes, plus a comma between two:
    each item is serialised once, and each page tried only without its items. The same sizes as
    `size(result_for(k))`, so the same page as fit_page answers."""
    if count <= 0:
        return result_for(count)
    whole = result_for(count)
    sums = list(accumulate(size(item) for item in getattr(whole, field)))

    def size_of(k: int) -> int:
        page = whole if k == count else result_for(k)
        return size(page.model_copy(update={field: []})) + sums[k - 1] + k - 1

    k = _longest(size_of, count, RESULT_BUDGET)
    return whole if k == count else result_for(k)


# ---------------------------------------------------------------- what a result left out


class Cut(BaseModel):
    """One list or string that a result holds only part of, and how to reach the rest."""

    field: str = Field(description="Dotted path of the list or string, e.g. attachments, to, messages.3.cc")
    shown: int = Field(description="What the result holds: items of a list, characters of a string")
    total: int = Field(description="What there is: items of the whole list, characters of the whole string")
    how_to_get_the_rest: str = Field(description="The call that brings the rest, or that no call can")


def cut_field() -> Any:
    """A result's `cut`: every tool result has it, empty when nothing was left out."""
    return Field(
        default_factory=list,
        description="What this result left out: one entry per list or string it holds only part of (empty when "
        "nothing was left out). Tell the user the true total, not only what is shown",
    )


# ---------------------------------------------------------------- the page fields of a result


def next_page_field(items: str) -> Any:
    """A result's `next_page_token`: null on the last page of `items`."""
    return Field(
        default=None, description=f"Set when more {items} follow: pass it as page_token (same arguments) for them"
    )


def page_cut_field(held: str) -> Any:
    """A result's `page_budget_exhausted`: true when the budget, not the page size, ended the page
    (`held`: what the page then holds, and where next_page_token goes on)."""
    return Field(default=False, description=f"true: {held}")


def fewer_than_there_are(items: str) -> str:
    """What a page of a list (labels, drafts) holds when the budget ended it."""
    return (
        f"the result reached its {BUDGET_WORDS}, so it holds fewer {items} than there are (or than asked for); "
        "next_page_token continues"
    )


# ---------------------------------------------------------------- the last resort


def _largest(value: Any, path: tuple[Any, ...] = ()) -> tuple[int, tuple[Any, ...], str] | None:
    """(size, path, kind) of the largest string (over 64 characters) or list (over one item) inside."""
    best: tuple[int, tuple[Any, ...], str] | None = None

    def consider(candidate: tuple[int, tuple[Any, ...], str] | None) -> None:
        nonlocal best
        if candidate is not None and (best is None or candidate[0] > best[0]):
            best = candidate

    if isinstance(value, str):
        if len(value) > 64:
            consider((json_length(value), path, "str"))
    elif isinstance(value, list):
        if len(value) > 1:
            consider((size(value), path, "list"))
        for index, item in enumerate(value):
            consider(_largest(item, (*path, index)))
    elif isinstance(value, dict):
        for key, item in value.items():
            consider(_largest(item, (*path, key)))
    return best


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, list):
        items = list(value)
        items[head] = _replace(value[head], rest, new)
        return items
    fields = dict(value)
    fields[head] = _replace(value[head], rest, new)
    return fields


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        value = value[part]
    return value


def shrink_json(value: Any, budget: int = RESULT_BUDGET) -> Any:
    """Cut a JSON value until it fits: the largest string gets shorter (ending in CUT_MARK), or
    the largest list loses items from its end, whichever is bigger, until the size is in budget.
    Strings and lists only get shorter, so the value keeps its schema."""
    for _ in range(10_000):
        excess = size(value) - budget
        if excess <= 0:
            return value
        found = _largest(value)
        if found is None:
            return value  # nothing left to cut: only short strings and single items
        _size, path, kind = found
        target = _get(value, path)
        if kind == "str":
            keep = max(0, json_length(target) - excess - json_length(CUT_MARK))
            value = _replace(value, path, fit_text(target, keep) + CUT_MARK)
        else:
            items = list(target)
            freed = 0
            while len(items) > 1 and freed < excess:
                freed += size(items.pop()) + 1
            value = _replace(value, path, items)
    return value


def shrink(model: M, budget: int = RESULT_BUDGET) -> M:
    """A model whose structuredContent fits the budget: itself, or a copy cut by `shrink_json`."""
    data = dumped(model)
    if size(data) <= budget:
        return model
    return type(model).model_validate(shrink_json(data, budget))


def with_text(model: M, name: str, text: str, *, others: int = 0, keep: int = BODY_ROOM) -> M:
    """`model` with field `name` set to the longest beginning of `text` that fits the budget, where
    `others` characters of the result lie outside `model`. When the model's other fields leave less
    than `keep` characters for the text, they are shrunk to leave that much."""
    limit = RESULT_BUDGET - others
    empty = model.model_copy(update={name: ""})
    if size(empty) > limit - keep:
        empty = shrink(empty, limit - keep)
    return empty.model_copy(update={name: fit_text(text, limit - size(empty))})
