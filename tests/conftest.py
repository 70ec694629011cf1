"""Shared fixtures: one Gmail emulator per test session, reset before every test that uses it."""

from __future__ import annotations

import inspect
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from mcp import Client
from mcp.client.session import ClientSession
from mcp.server.mcpserver.tools.base import Tool

from gmail_emulator import GmailEmulator, Knobs
from mcp_multi_gmail.gmail.imap import worker
from support import pycache
from support.web_standin import WebStandIn
from tool_results import check_result, check_wire_result

# Property tests are deterministic in the suite, so CI never turns red by chance. To hunt for new
# failures with fresh random examples (not for CI): uv run pytest --hypothesis-profile=hunt -k never_raise
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("hunt", derandomize=False, print_blob=True)
# The model-based write tests (tests/server/test_write_model.py) run 4 sequences of 12 steps in the
# suite; this profile runs many more, longer ones, with fresh random examples (docs/en/development.md):
# uv run pytest -n0 tests/server/test_write_model.py --hypothesis-profile=writes-long
settings.register_profile(
    "writes-long",
    derandomize=False,
    database=None,
    print_blob=True,
    max_examples=200,
    stateful_step_count=30,
    deadline=None,  # a step is a tool call against the emulator: its time says nothing about the code
)
settings.load_profile("ci")

# Keep compiled test modules and their rewritten asserts between runs, even where the machine sets
# PYTHONDONTWRITEBYTECODE: without the cache every xdist worker rewrites every test module again on
# every run (docs/en/development.md). The workers inherit the environment.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

# Fake app passwords (16 lowercase letters, as Google issues them).
PASSWORDS = {
    "osobni@example.cz": "osobniheslohesla",
    "tym@example.com": "tymovehesloheslo",
    "upozorneni@example.com": "automatyheslooko",
}


# Modules whose module- or session-scoped fixtures are expensive: a release build with its virtual
# environment, Claude Code's recorded runs, the big mailbox of the result-budget tests. All of such
# a module's tests go to one pytest-xdist worker, first, so each is built once per run and no
# worker sits waiting on another's lock; every other test is handed out on its own, to whichever
# worker is free. (xdist's `--dist loadgroup` does the same with marks, but not under pytest 9.2.)
ONE_WORKER_MODULES = (
    "tests/test_claude_code.py",
    "tests/test_claude_code_monitor.py",
    "tests/test_release.py",
    "tests/test_launcher.py",
    "tests/server/test_result_budget.py",
)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: two workers more than there are cores. About a third of a worker's time is spent
    waiting (deadlines, IDLE, Node and release subprocesses), and the extra workers fill it: on 2
    cores the suite took 200 s with 2 workers and 154 s with 3 in an earlier round, and this round
    189 s with 3, 178 s with 4 and 209 s with 5 (docs/en/development.md)."""
    return (os.cpu_count() or 1) + 2


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput") and (getattr(config.option, "numprocesses", None) or 0) > 1:
        pycache.write_before_workers(config)  # the controller, before it starts the workers


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """The scheduler for the default `--dist load`; an explicit other `--dist` is left alone."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling  # type: ignore[import-untyped]

    class ExpensiveModulesTogether(LoadScopeScheduling):  # type: ignore[misc]
        # Work units are scopes, handed out largest first (xdist's --loadscope-reorder, on by default).
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return module if module in ONE_WORKER_MODULES else nodeid

    return ExpensiveModulesTogether(config, log)


class Hangup(Exception):
    """The test process got a SIGHUP: something under test signalled a process it only had to look at."""


def _hangup(signum: int, frame: object) -> None:
    raise Hangup("the test process received SIGHUP")


@pytest.fixture(scope="session", autouse=True)
def a_hangup_fails_the_test() -> Iterator[None]:
    """Nothing in the server signals another process; a hold on a token only asks whether its holder lives
    (os.kill with signal 0). A SIGHUP sent to the test process itself fails the test that sent it, instead
    of ending the whole run."""
    previous = signal.signal(signal.SIGHUP, _hangup)
    yield
    signal.signal(signal.SIGHUP, previous)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session", autouse=True)
def tool_schemas_built_once() -> Iterator[None]:
    """The SDK builds each tool's argument model and JSON Schemas from its function, which is most of
    a new server's cost (about 0.15 s); a server process does it once, the suite for every server it
    builds (a thousand). The tools' functions are closures over the runtime, but their signature
    and docstring are the code's own, so what the SDK derives from one server's `mg_get_thread`
    holds for every server's: it is built once per worker and handed out with each server's own function."""
    built: dict[tuple[Any, ...], Tool] = {}
    original = Tool.from_function.__func__  # type: ignore[attr-defined]

    def from_function(cls: type[Tool], fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Tool:
        code = inspect.unwrap(fn).__code__
        key = (code, repr(args), repr(sorted(kwargs.items(), key=lambda item: item[0])))
        if key not in built:
            built[key] = original(cls, fn, *args, **kwargs)
        return built[key].model_copy(update={"fn": fn, "meta": kwargs.get("meta")})

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Tool, "from_function", classmethod(from_function))
        yield


@pytest.fixture(scope="session", autouse=True)
def output_validators_shared_across_sessions() -> Iterator[None]:
    """The SDK client compiles a tool's output-schema validator once per session, checking the
    schema itself first (~20 ms of CPU per tool), and nearly every test opens sessions of its own.
    Here each schema's validator is compiled once per worker; the SDK still validates every result
    with it, and a changed schema still gets a validator of its own."""
    original = ClientSession._output_schema_validator
    compiled: dict[str, Any] = {}

    def shared(self: ClientSession, name: str, output_schema: dict[str, Any]) -> Any:
        mine = self._tool_output_validators.get(name)
        if mine is not None:
            return mine
        key = json.dumps(output_schema, sort_keys=True)
        if key not in compiled:
            compiled[key] = original(self, name, output_schema)
        self._tool_output_validators[name] = compiled[key]
        return compiled[key]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ClientSession, "_output_schema_validator", shared)
        yield


@pytest.fixture(scope="session", autouse=True)
def every_tool_result_has_a_valid_shape() -> Iterator[None]:
    """Every tool call the suite makes through the SDK client (in-process or over stdio) is checked:
    an error in the documented error shape, or structuredContent valid against the outputSchema."""
    original = Client.call_tool

    async def checked(self: Client, name: str, arguments: dict[str, Any] | None = None, *a: Any, **kw: Any) -> Any:
        # Listed before the first call: the SDK's session keeps this listing and checks the result
        # against it too, instead of asking tools/list a second time (~20 ms of CPU per test client).
        # Listed again for a tool the listing lacks (repair mode switches tools on).
        schemas: dict[str, Any] | None = self.__dict__.get("_output_schemas")
        if schemas is None or name not in schemas:
            listing = await self.list_tools(cache_mode="use" if schemas is None else "refresh")
            schemas = {tool.name: tool.output_schema for tool in listing.tools}
            self.__dict__["_output_schemas"] = schemas
        result = await original(self, name, arguments, *a, **kw)
        # The SDK has just validated a success against the schema it listed; when that is this
        # listing's schema, validating it again here would prove nothing.
        listed = self.session._tool_output_schemas.get(name)
        check_result(name, result, schemas.get(name), schema_checked=listed is not None and listed == schemas.get(name))
        return result

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Client, "call_tool", checked)
        yield


@pytest.fixture(autouse=True)
def no_backoff(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The jittered wait before the one more login after Gmail's "too many connections" (1-3 s) is
    0 s in-process, except in the tests about that wait (marked `real_backoff`)."""
    if request.node.get_closest_marker("real_backoff") is None:
        monkeypatch.setattr(worker, "TOO_MANY_BACKOFF_S", (0.0, 0.0))


def quick_knobs() -> Knobs:
    """Gmail's likeliest behaviour minus its delays: for the many tests that are about something else.
    A test about the Sent filing delay or the search-index lag sets those knobs itself."""
    return Knobs(sent_filing_delay_s=0.0, raw_search_lag_s=0.0)


@pytest.fixture(scope="session")
def emulator_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GmailEmulator]:
    with GmailEmulator(workdir=tmp_path_factory.mktemp("emulator"), knobs=quick_knobs()) as emulator:
        yield emulator


@pytest.fixture
def emulator(emulator_session: GmailEmulator) -> GmailEmulator:
    """A fresh, empty emulator with the three test mailboxes and the quick knobs."""
    emulator_session.reset()
    for address, password in PASSWORDS.items():
        emulator_session.add_account(address, password)
    return emulator_session


def account_entry(name: str, address: str, **extra: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": name, "address": address, "password": PASSWORDS.get(address, "x")}
    entry.update(extra)
    return entry


@pytest.fixture
def write_config(tmp_path: Path) -> Callable[..., Path]:
    """Write a configuration JSON into tmp_path and return its path."""

    def write(accounts: list[dict[str, Any]], **top: Any) -> Path:
        path = tmp_path / "multigmail.json"
        body: dict[str, Any] = {"accounts": accounts, **top}
        path.write_text(json.dumps(body, ensure_ascii=False, indent=2), encoding="utf-8")
        return path

    return write


class RawRpc:
    """Newline-delimited JSON-RPC to a server subprocess; every stdout line must be protocol."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.tool_calls: dict[int, str] = {}  # request id -> tool, to check each result's shape
        self.notifications: list[dict[str, Any]] = []  # what arrived while waiting for replies

    def send(self, message: dict[str, Any]) -> None:
        if message.get("method") == "tools/call":
            self.tool_calls[message["id"]] = message["params"]["name"]
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def reply(self, request_id: int) -> dict[str, Any]:
        """Read stdout until the answer to request_id; a stray print() fails the JSON parse."""
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            assert line, "the server closed stdout"
            message: dict[str, Any] = json.loads(line)
            assert message.get("jsonrpc") == "2.0"
            if "method" in message and "id" not in message:
                self.notifications.append(message)
            if message.get("id") == request_id:
                if request_id in self.tool_calls and "result" in message:
                    check_wire_result(self.tool_calls[request_id], message["result"])
                return message


@pytest.fixture
def raw_rpc() -> type[RawRpc]:
    return RawRpc


@pytest.fixture
def web_standin(tmp_path: Path) -> Iterator[WebStandIn]:
    """A local HTTPS stand-in for a one-click unsubscribe endpoint (tests/support/web_standin.py),
    with a certificate for news.example and lists.example; `web_standin.environ()` points MG_WEB_* at it."""
    with WebStandIn(tmp_path, names=("news.example", "lists.example")) as standin:
        yield standin
