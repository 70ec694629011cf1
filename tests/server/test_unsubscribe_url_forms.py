"""One rule for a one-click URL (issue 41): the overview's `one_click` for a list is what
mg_unsubscribe with dry_run: true decides for it, on every form a URL takes. The overview does not
resolve host names: a host whose lookup answers an address no request may go to is refused at the
call, as a fact of the network that the refusal names."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from toolcalls import Call, ok

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.runtime import Runtime
from support import gmail_env, load_runtime
from support.newsletters import Newsletter, deliver
from support.web_standin import WebStandIn
from tool_results import error_body

pytestmark = pytest.mark.anyio

ME = "osobni@example.cz"
ACCOUNT = {"name": "o", "address": ME, "password": "osobniheslohesla", "can_unsubscribe": True}
# Resolved to the stand-in in test mode, like any host the list's lookup would find.
HOSTS = ("news.example", "xn--bcher-kva.example", "93.184.216.34", "[2606:4700::1111]")
NETWORK = "network"  # allowed by the rule; refused at the call by what the host resolves to

# (URL, the decision: True / False / NETWORK)
FORMS: list[tuple[str, bool | str]] = [
    ("https://news.example/u?id=1&list=a", True),
    ("https://news.example", True),
    ("https://NEWS.Example/u", True),
    ("HTTPS://news.example/u", True),
    ("https://news.example:443/u", True),
    ("https://news.example/u#fragment", True),
    ("https://news.example/a%20b?x=%C3%BC", True),
    ("https://xn--bcher-kva.example/u", True),
    ("https://93.184.216.34/u", True),
    ("https://[2606:4700::1111]/u", True),
    ("https://news.example/\u00fcnsubscribe", False),
    ("https://news.example/u?name=J\u00fcrgen", False),
    ("https://b\u00fccher.example/u", False),
    ("https://user@news.example/u", False),
    ("https://user:pw@news.example/u", False),
    ("https://news.example:8443/u", False),
    ("https://news.example:0/u", False),
    ("https://news.example:99999/u", False),
    ("https://news.example./u", False),
    ("https://-news.example/u", False),
    ("https://127.1/u", False),
    ("https://2130706433/u", False),
    ("https://127.0.0.1/u", False),
    ("https://10.0.0.1/u", False),
    ("https://169.254.169.254/latest/meta-data/", False),
    ("https://[::1]/u", False),
    ("https://[::ffff:8.8.8.8]/u", False),
    ("https://[fe80::1]/u", False),
    ("https://news.example\\@evil.example/u", False),
    ("https://news.example/a|b", False),
    ("http://news.example/u", False),
    ("https://private.example/u", NETWORK),
]


@pytest.fixture(scope="module")
def standin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebStandIn]:
    with WebStandIn(tmp_path_factory.mktemp("web")) as server:
        yield server


@pytest.fixture
def runtime(emulator: GmailEmulator, standin: WebStandIn, write_config: Callable[..., Path], tmp_path: Path) -> Runtime:
    environ = {**gmail_env(emulator), **standin.environ(*HOSTS, extra=("private.example=10.0.0.1:443",))}
    return load_runtime(write_config([ACCOUNT]), environ, state_dir=tmp_path / "state")


async def test_the_overview_and_a_dry_run_decide_alike_on_every_url_form(
    emulator: GmailEmulator, standin: WebStandIn, call: Call, runtime: Runtime
) -> None:
    named = {}
    for number, (url, _expected) in enumerate(FORMS):
        letter = Newsletter(f"n{number}@form{number}.example", f"Form {number}", f"l{number}.forms.example", f"<{url}>")
        [named[letter.list_id]] = deliver(emulator, ME, letter)
    listed = await ok(call, runtime, "mg_list_subscriptions", account="o")
    overview = {s["list_id"]: s for s in listed["subscriptions"]}
    seen: list[tuple[str, bool | str, bool | str]] = []
    for number, (url, _expected) in enumerate(FORMS):
        list_id = f"l{number}.forms.example"
        shown = overview[list_id]
        result = await call(
            runtime,
            "mg_unsubscribe",
            {"account": "o", "message_id": named[list_id], "method": "one_click", "dry_run": True},
        )
        decided: bool | str = not result.is_error
        if result.is_error:
            refusal = error_body(result)
            assert refusal["code"] == "unsubscribe_refused", (url, refusal)
            if "resolves to" in refusal["message"]:
                decided = NETWORK
                # Said as what it is: the URL passed, its host's lookup did not.
                assert "passed every rule" in refusal["message"] and "resolves to 10.0.0.1" in refusal["message"]
            else:
                assert f": {shown['why_not_one_click']}." in refusal["message"], (url, refusal, shown)
        seen.append((url, shown["one_click"], decided))
    assert [(url, one_click) for url, one_click, _ in seen] == [(url, bool(e)) for url, e in FORMS]
    assert [(url, decided) for url, _, decided in seen] == FORMS
    assert standin.connections == []
