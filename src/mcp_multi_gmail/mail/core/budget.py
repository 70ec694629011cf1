"""The result budget: every tool result fits inline in the assistant's context.

Claude Code hands the model a tool's `structuredContent` as compact JSON and, above about
25 000 tokens (characters / 4) or 50 000 characters, a "saved to a file" notice instead of the
result (docs/en/tools.md, "Result budget"). So every result is kept at or under
RESULT_BUDGET characters of compact JSON, measured here, never estimated per field: pages stop
adding threads or messages when the next one would not fit, body windows end where the budget
does, and a last-resort `shrink` cuts whatever a pathological mailbox still makes too large.
Whatever is cut is said in the result's `cut` (docs/en/tools.md, "What a result left out").
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from itertools import accumulate
from typing import Any, TypeVar, cast

from pydantic import BaseModel, Field

RESULT_BUDGET = 40_000
# A body window always keeps at least this much of the budget (or all it needs, when it is
# shorter): when a message's other fields (recipients, attachments) take more, they are cut
# instead, so reading on always advances.
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


# What JSON escapes in a string (ensure_ascii off): quotes, backslashes, control characters.
_ESCAPED = re.compile(r'["\\\x00-\x1f]')


def json_length(text: str) -> int:
    """Characters a string takes inside JSON, without its quotes (escapes counted)."""
    if _ESCAPED.search(text) is None:
        return len(text)  # most strings: nothing to escape, the length is the answer
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

    field: str = Field(
        description="Dotted path of the list or string, e.g. attachments, to, messages.3.cc; messages.*.cc: that "
        "list in several items, shown and total added up"
    )
    shown: int = Field(description="What the result holds: items of a list, characters of a string")
    total: int = Field(description="What there is: items of the whole list, characters of the whole string")
    how_to_get_the_rest: str = Field(description="The call that brings the rest, or that no call can")


# The `cut` list is measured with the result and never cut itself. When its entries would take
# more than this, the entries of one list in every item (messages.0.cc, messages.1.cc, ...)
# become one (messages.*.cc, their counts added up): saying what was cut stays short, however
# many lists were cut.
CUT_ROOM = 4_000
# A result model may name the call that brings the rest of one of its lists (mg_get_message's
# attachments): shrink asks it through a method of this name, `(path, shown, total) -> Cut | None`.
DESCRIBE_CUT = "describe_cut"

JsonPath = tuple[str | int, ...]


def dotted(path: JsonPath) -> str:
    """A JSON path as a Cut's `field` writes it: messages.3.cc."""
    return ".".join(str(part) for part in path)


def no_rest(tool: str | None) -> str:
    """how_to_get_the_rest of a cut that no call undoes."""
    return f"No call brings the rest: {tool or 'this tool'} keeps every result within its {BUDGET_WORDS}"


def page_cut(tool: str, field: str, shown: int, total: int) -> list[Cut]:
    """The `cut` of a page the budget ended before it was full: `shown` of the list's `total`
    items, and next_page_token brings the next ones. (A page that ends where the call's page size
    does is no cut: it holds what was asked for.)"""
    how = f"{tool} with page_token set to next_page_token (same arguments) brings the next ones"
    return [Cut(field=field, shown=shown, total=total, how_to_get_the_rest=how)]


def cuts_of(model: BaseModel) -> list[Cut]:
    return list(cast(list[Cut], getattr(model, "cut", [])))


def with_cuts(model: M, *entries: Cut, dropping: tuple[str, ...] = ()) -> M:
    """`model` with `entries` added to its `cut`; each replaces an earlier entry of its field, and
    the entries of the fields in `dropping` go."""
    gone = {entry.field for entry in entries} | set(dropping)
    kept = [entry for entry in cuts_of(model) if entry.field not in gone]
    return model.model_copy(update={"cut": [*kept, *entries]})


def _pattern(field: str) -> str:
    return ".".join("*" if part.isdigit() else part for part in field.split("."))


def merged(entries: list[Cut], room: int = CUT_ROOM) -> list[Cut]:
    """`entries`, or, when they take more than `room` characters, one entry per list pattern
    (messages.*.cc for messages.0.cc, messages.1.cc, ...) with shown and total added up."""
    if size([entry.model_dump() for entry in entries]) <= room:
        return entries
    groups: dict[str, list[Cut]] = {}
    for entry in entries:
        groups.setdefault(_pattern(entry.field), []).append(entry)
    return [group[0] if len(group) == 1 else _together(pattern, group) for pattern, group in groups.items()]


def _together(pattern: str, group: list[Cut]) -> Cut:
    first = group[0]
    how = first.how_to_get_the_rest
    if any(entry.how_to_get_the_rest != how for entry in group):
        how = f"{len(group)} of these were cut, counts added up; for {first.field}: {how}"
    return Cut(
        field=pattern,
        shown=sum(entry.shown for entry in group),
        total=sum(entry.total for entry in group),
        how_to_get_the_rest=how,
    )


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


def _candidates(value: Any) -> tuple[int, list[tuple[int, JsonPath, str]]]:
    """The size of a JSON value, and (size, path, kind) of every string (over 64 characters) and
    list (over one item) inside, never inside the result's own `cut`: one walk, each size added
    up from its parts (compact JSON: brackets, commas, quoted keys and colons)."""
    found: list[tuple[int, JsonPath, str]] = []

    def walk(item: Any, path: JsonPath) -> int:
        if isinstance(item, str):
            length = json_length(item) + 2
            if len(item) > 64:
                found.append((length - 2, path, "str"))
            return length
        if isinstance(item, list):
            length = 2 + max(0, len(item) - 1) + sum(walk(one, (*path, index)) for index, one in enumerate(item))
            if len(item) > 1:
                found.append((length, path, "list"))
            return length
        if isinstance(item, dict):
            length = 2 + max(0, len(item) - 1)
            for key, one in item.items():
                length += json_length(str(key)) + 3
                length += walk(one, (*path, key)) if path or key != "cut" else size(one)
            return length
        if item is None or item is True:
            return 4
        if item is False:
            return 5
        return len(compact(item))

    return walk(value, ()), found


def _choice(candidates: list[tuple[int, JsonPath, str]]) -> tuple[int, JsonPath, str]:
    """What shrink_json cuts first: the largest candidate, except that a list made at least half
    of lists (messages with their cc, a thread with its messages' recipients) gives way to the
    largest of them, so whole items are dropped only when their own lists can free no more."""
    choice = max(candidates, key=lambda c: c[0])
    while choice[2] == "list":
        inner = [c for c in candidates if c[2] == "list" and len(c[1]) > len(choice[1]) and _related(c[1], choice[1])]
        outermost = [c for c in inner if not any(len(o[1]) < len(c[1]) and _related(o[1], c[1]) for o in inner)]
        if not outermost or 2 * sum(c[0] for c in outermost) < choice[0]:
            break
        choice = max(inner, key=lambda c: c[0])
    return choice


def _related(one: JsonPath, other: JsonPath) -> bool:
    """Whether one path lies inside the other (or is it)."""
    shorter = min(len(one), len(other))
    return one[:shorter] == other[:shorter]


def _replace(value: Any, path: JsonPath, new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, list):
        items = list(value)
        items[cast(int, head)] = _replace(value[cast(int, head)], rest, new)
        return items
    fields = dict(value)
    fields[head] = _replace(value[head], rest, new)
    return fields


def _get(value: Any, path: JsonPath) -> Any:
    for part in path:
        value = value[part]
    return value


def shrink_json(value: Any, budget: int = RESULT_BUDGET) -> Any:
    """Cut a JSON value until it fits: the largest string gets shorter (ending in CUT_MARK), or
    the largest list loses items from its end, whichever is bigger, until the size is in budget.
    A cut takes the largest down to the next largest beside it (a quarter of the excess at least),
    so two long lists (to and cc) both keep a part; a list that is mostly lists (messages with
    their recipients) loses those inner lists' items before its own (_choice). Strings and lists
    only get shorter, so the value keeps its schema. A top-level `cut` (what the result left out) is never cut."""
    for _ in range(10_000):
        total, candidates = _candidates(value)
        excess = total - budget
        if excess <= 0:
            return value
        if not candidates:
            return value  # nothing left to cut: only short strings and single items
        largest, path, kind = _choice(candidates)
        rivals = [c[0] for c in candidates if not _related(c[1], path)]
        step = min(excess, max(largest - max(rivals), excess // 4 + 1)) if rivals else excess
        target = _get(value, path)
        if kind == "str":
            base = target.removesuffix(CUT_MARK)
            keep = max(0, json_length(target) - step - json_length(CUT_MARK))
            value = _replace(value, path, fit_text(base, keep) + CUT_MARK)
        else:
            items = list(target)
            freed = 0
            while len(items) > 1 and freed < step:
                freed += size(items.pop()) + 1
            value = _replace(value, path, items)
    return value


def _found_cuts(before: Any, after: Any, path: JsonPath = ()) -> list[tuple[JsonPath, int, int]]:
    """(path, shown, total) of every list and string that `after` (shrink_json of `before`) holds
    less of: items for a list, characters for a string. What lies in a dropped item is not listed."""
    if isinstance(before, str) and isinstance(after, str):
        if after != before and after.endswith(CUT_MARK):
            return [(path, len(after) - len(CUT_MARK), len(before))]
        return []
    found: list[tuple[JsonPath, int, int]] = []
    if isinstance(before, list) and isinstance(after, list):
        if len(after) < len(before):
            found.append((path, len(after), len(before)))
        for index, item in enumerate(after):
            found += _found_cuts(before[index], item, (*path, index))
    elif isinstance(before, dict) and isinstance(after, dict):
        for key, item in after.items():
            if key in before and (path or key != "cut"):
                found += _found_cuts(before[key], item, (*path, key))
    return found


def shrink(model: M, budget: int = RESULT_BUDGET, *, tool: str | None = None) -> M:
    """A model whose structuredContent fits the budget: itself, or a copy cut by `shrink_json`.

    Every list and string cut is added to the model's `cut` (when it has one): its path, what is
    shown, its true total (the model holds the whole value) and how to get the rest, as the
    model's DESCRIBE_CUT method words it or else that no call can (`tool` names the tool). The
    `cut` list counts against the budget: when the entries push the result over, the rest is
    cut further, so the answer fits with them."""
    data = dumped(model)
    if size(data) <= budget:
        return model
    listed = "cut" in type(model).model_fields
    describe = getattr(model, DESCRIBE_CUT, None)
    before = cuts_of(model)
    room = budget
    shrunk = data
    for _ in range(20):
        shrunk = shrink_json(shrunk, room)  # on from the last try: it only ever cuts more
        if not listed:
            break
        found: list[Cut] = []
        for path, shown, total in _found_cuts(data, shrunk):
            told = describe(path, shown, total) if describe is not None else None
            found.append(told or Cut(field=dotted(path), shown=shown, total=total, how_to_get_the_rest=no_rest(tool)))
        fields = {entry.field for entry in found}
        entries = merged([*(entry for entry in before if entry.field not in fields), *found])
        shrunk = {**shrunk, "cut": [entry.model_dump(mode="json") for entry in entries]}
        over = size(shrunk) - budget
        if over <= 0:
            break
        room -= over
    return type(model).model_validate(shrunk)


def with_text(model: M, text: str, put: Callable[[M, str], M], *, keep: int = BODY_ROOM, tool: str | None = None) -> M:
    """`put(model, t)` for the longest beginning t of `text` that fits the budget. When the other
    fields leave less than `keep` characters for the text (or than the whole text needs, when it
    is shorter), they are shrunk to leave that much. `put` sets the text and whatever goes with it
    (a flag, a `cut` entry saying where to read on); what it adds is measured."""
    empty = put(model, "")
    keep = min(keep, json_length(text))
    if size(empty) > RESULT_BUDGET - keep:
        empty = shrink(empty, RESULT_BUDGET - keep, tool=tool)
    room = RESULT_BUDGET - size(empty)
    fitted = put(empty, fit_text(text, room))
    for _ in range(5):  # what `put` adds for a cut text (its numbers) can take a few characters more
        over = size(fitted) - RESULT_BUDGET
        if over <= 0:
            break
        room -= over
        fitted = put(empty, fit_text(text, room))
    return fitted
