"""The rule scripts/mutation.py judges the policy's surviving mutants by: only a message's text may change.

A survivor whose diff changes anything a caller can branch on (an error code, a compared or
searched string, a key, a value handed on) is a decision and fails the mutation step; one that
changes only the words of a message may survive (docs/en/development.md).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mutation_script", ROOT / "scripts" / "mutation.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


mutation = _script()

ORIGINAL = """
def check(value, items):
    done = "Nothing was sent." if value else "Nothing was saved."
    if value == "@" or value.startswith("\\\\"):
        raise MailError("invalid_input", f"The value {value!r} is not allowed. {done}")
    wanted = {"seen": True}
    known = "Known: " + ", ".join(f"<{item}>" for item in items)
    if not items:
        raise TypeError(f"{value} must be a sequence")
    note = "a third"
    if note in value:
        raise MailError("send_forbidden", known)
    return "processed"
"""


def mutated(old: str, new: str) -> str:
    assert ORIGINAL.count(old) == 1, old
    return ORIGINAL.replace(old, new)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ('f"The value {value!r} is not allowed. {done}"', 'f"XXThe value {value!r} is not allowed. {done}XX"'),
        ('"Nothing was sent."', '"XXNothing was sent.XX"'),
        ('"Nothing was saved."', '"NOTHING WAS SAVED."'),
        ('"Known: "', '"XXKnown: XX"'),
        ('", ".join', '"XX, XX".join'),
        ('f"<{item}>"', 'f"XX<{item}>XX"'),
        ('f"{value} must be a sequence"', 'f"{value} MUST BE A SEQUENCE"'),
    ],
    ids=[
        "mailerror-message",
        "local-used-in-message",
        "other-branch",
        "concatenated",
        "join-separator",
        "joined-part",
        "typeerror-message",
    ],
)
def test_message_text_may_survive(old: str, new: str) -> None:
    assert mutation.only_message_text(ORIGINAL, mutated(old, new))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ('MailError("invalid_input"', 'MailError("XXinvalid_inputXX"'),
        ('MailError("invalid_input"', "MailError(None"),
        ('value == "@"', 'value == "XX@XX"'),
        ('startswith("\\\\")', 'startswith("XX\\\\XX")'),
        ('{"seen": True}', '{"SEEN": True}'),
        ('note = "a third"', 'note = "XXa thirdXX"'),
        ('return "processed"', 'return "XXprocessedXX"'),
        ('f"The value {value!r} is not allowed. {done}"', 'f"The value {None!r} is not allowed. {done}"'),
        ('f"The value {value!r} is not allowed. {done}"', "None"),
        ("if value else", "if not value else"),
    ],
    ids=[
        "error-code",
        "error-code-none",
        "compared",
        "searched",
        "key",
        "local-also-compared",
        "returned",
        "fstring-expression",
        "message-gone",
        "condition",
    ],
)
def test_everything_else_is_a_decision(old: str, new: str) -> None:
    assert not mutation.only_message_text(ORIGINAL, mutated(old, new))


STORE_ERROR = """
def _unwritable(path, error):
    return unwritable(f"The record ({path.name})", path.parent, error, "Nothing was contacted.")
"""


@pytest.mark.parametrize(
    "new",
    [
        STORE_ERROR.replace('"Nothing was contacted."', '"XXNothing was contacted.XX"'),
        STORE_ERROR.replace('f"The record ({path.name})"', "None"),
        STORE_ERROR.replace("path.parent,", "None,"),
    ],
    ids=["outcome", "name-none", "folder-none"],
)
def test_the_words_of_a_store_error_may_change(new: str) -> None:
    assert mutation.only_message_text(STORE_ERROR, new)


NOT_RECORDED = """
def settle(left, error, answer):
    try:
        left.settle()
    except MailError as error:
        made = f"the POST went to {answer.host}"
        note = _not_recorded(error, made, "it would post again")
    return note
"""


@pytest.mark.parametrize(
    "new",
    [
        NOT_RECORDED.replace('made = f"the POST went to {answer.host}"', "made = None"),
        NOT_RECORDED.replace('"it would post again"', '"XXit would post againXX"'),
        NOT_RECORDED.replace('"it would post again"', "None"),
    ],
    ids=["made-none", "retry", "retry-none"],
)
def test_what_a_note_of_a_request_not_recorded_says_may_change(new: str) -> None:
    assert mutation.only_message_text(NOT_RECORDED, new)


def test_the_error_a_store_error_reads_is_a_decision() -> None:
    """unwritable reads the OSError's strerror: None there raises instead of naming a reason."""
    assert not mutation.only_message_text(STORE_ERROR, STORE_ERROR.replace(", error,", ", None,"))


def test_an_unchanged_function_is_not_message_text() -> None:
    assert not mutation.only_message_text(ORIGINAL, ORIGINAL)


DIFF = """--- src/mcp_multi_gmail/policy/sending.py
+++ src/mcp_multi_gmail/policy/sending.py
@@ -1,4 +1,4 @@
     low = address.lower()
-    return low in entries
+    return low not in entries
"""


def test_an_equivalent_entry_matches_its_function_and_plus_line_only() -> None:
    mutant = mutation.Mutant("m.x_check__mutmut_1", "check", "survived", DIFF)
    assert mutation.Equivalent("check", "return low not in entries", "", "why").matches(mutant)
    assert not mutation.Equivalent("other", "return low not in entries", "", "why").matches(mutant)
    assert not mutation.Equivalent("check", "return low in entries", "", "why").matches(mutant)
    removal = mutation.Mutant(
        "m.x_check__mutmut_2", "check", "survived", DIFF.replace("+    return low not in entries\n", "")
    )
    assert mutation.Equivalent("check", "", "return low in entries", "why").matches(removal)
    assert not mutation.Equivalent("check", "", "return low in entries", "why").matches(mutant)
    # Where a target mutates several files, an entry may name its file.
    swept = mutation.Mutant("m.x_check__mutmut_1", "check", "survived", DIFF, "src/mcp_multi_gmail/mail/sweep.py")
    assert mutation.Equivalent("check", "return low not in entries", "", "why", "sweep.py").matches(swept)
    assert not mutation.Equivalent("check", "return low not in entries", "", "why", "undo.py").matches(swept)


@pytest.mark.parametrize("target", sorted(mutation.TARGETS))
def test_the_listed_equivalents_are_well_formed(target: str) -> None:
    entries = mutation.load_equivalents(mutation.TARGETS[target].equivalents)
    assert all(entry.function and entry.reason.strip() for entry in entries)
    keys = [(entry.module, entry.function, entry.plus, entry.minus) for entry in entries]
    assert len(keys) == len(set(keys))


def test_each_target_mutates_files_that_exist() -> None:
    for target in mutation.TARGETS.values():
        assert target.sources() and all((ROOT / source).is_file() for source in target.sources()), target.name


REASON = """
def reason(name, on):
    what = f"the label {name}" if name else "the flag"
    state = "on" if on else "off"
    logger.error("could not set %s: %s", name, state)
    return f"Gmail accepted the change, but {what} was not {state}."
"""


def test_a_function_listed_as_returning_text_may_change_its_words_only() -> None:
    words = REASON.replace('"on" if on else "off"', '"XXonXX" if on else "off"')
    assert mutation.only_message_text(REASON, words, returns_text=True)
    assert not mutation.only_message_text(REASON, words)  # a returned string is a decision unless listed
    # None where a text is only ever formatted into an f-string reads "None": text.
    nothing = REASON.replace('f"the label {name}" if name else "the flag"', "None")
    assert mutation.only_message_text(REASON, nothing, returns_text=True)
    # Which of two texts: a condition, so a decision.
    assert not mutation.only_message_text(REASON, REASON.replace("if on else", "if not on else"), returns_text=True)
    # A log line's format and arguments are its words.
    assert mutation.only_message_text(REASON, REASON.replace('"could not', '"XXcould not'))
    assert mutation.only_message_text(REASON, REASON.replace('s", name, state)', 's", None, state)'))
