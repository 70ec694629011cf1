"""mg_list_subscriptions: who keeps writing, grouped by list, and what leaving each list would take.

Gmail's search has no operator for "carries List-Unsubscribe or List-Id", and whether its IMAP
`HEADER field ""` search finds every message that has the field (RFC 3501 section 6.4.4), every
message, or none is not documented. So the overview does not ask it: it reads the list fields and
From of every message of its query (BODY.PEEK[HEADER.FIELDS], some dozens of bytes a message, never
a body) and keeps the messages that carry either field, which is right whatever Gmail's HEADER
search would have said. Then the newest message of each list on the page is read once more with
its DKIM-Signature fields and Gmail's own verdict, which decide (in policy/unsubscribing.py) whether one-click
or a mailto opt-out is possible and, if not, why not. A constant number of commands: one SEARCH,
the FETCHes of the scan in batches (gmail/imap/batches.py), one FETCH for the page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from pydantic import BaseModel, Field

from ... import policy
from ...config import Account
from ...domain import Address
from ...errors import MailError
from ...gmail.imap import ALL_MAIL, Fetched, ImapSession, header_fields_item
from ...gmail.parse.listheaders import DECISION_FIELDS, LIST_UNSUBSCRIBE, SCAN_FIELDS, ListFacts, list_facts, mailto
from ...runtime import Runtime
from ...text import clean
from ..core import budget, inputs
from ..core.cursor import Key, decode, encode, fingerprint, key_of
from ..core.session import in_session
from ..core.summary import MESSAGE_ID_WORDS, iso
from .unsubscribed import Left, LeftLists, newest

DEFAULT_QUERY = "newer_than:90d"
# The newest messages of a query read by one overview; a query that finds more says so in `cut`.
MAX_SCANNED = 10_000
PAGE_LISTS = 50


class MailtoOptOut(BaseModel):
    address: str
    subject: str = Field(description='The subject its URL names ("unsubscribe" when it names none)')


class Subscription(BaseModel):
    list_id: str | None = Field(description="The List-Id; null when the mail carries none (then grouped by sender)")
    list_name: str | None = Field(description="The List-Id's phrase, written by the sender")
    sender: Address | None = Field(description="From of the newest message, written by the sender")
    messages: int = Field(description="Messages of the query in this list")
    last_received_at: str | None = Field(description="INTERNALDATE of the newest, ISO-8601 UTC")
    message_id: str | None = Field(
        description=f"The newest message with List-Unsubscribe, the one mg_unsubscribe acts on: {MESSAGE_ID_WORDS}"
    )
    one_click: bool = Field(
        description="RFC 8058 one-click is possible: an https URL with List-Unsubscribe=One-Click, both fields "
        "covered by a DKIM signature Gmail passed, port 443, no user or password; the rule mg_unsubscribe decides "
        "by (the addresses a host name resolves to are checked only at the call)"
    )
    why_not_one_click: str | None = Field(description="When one_click is false: the first rule it breaks")
    mailto: MailtoOptOut | None = Field(description="The opt-out address the header offers, or null")
    why_not_mailto: str | None = Field(description="When a mailto opt-out cannot be sent: the first rule it breaks")
    web_link: str | None = Field(description="The header's https link, for the user to open; never fetched")
    signed_by: str | None = Field(
        description="Domain of the DKIM signature Gmail passed that covers List-Unsubscribe; null: nobody vouches "
        "for the header's links (treat web_link with the caution due to any link in mail)"
    )
    left_at: str | None = Field(description="When mg_unsubscribe already left this list (UTC); null when it did not")


class SubscriptionsResult(BaseModel):
    account: str
    query: str = Field(description="The Gmail search the lists were found in")
    can_unsubscribe: bool = Field(description="mg_unsubscribe may act for this mailbox (configuration)")
    subscriptions: list[Subscription] = Field(description="Lists, the one with the newest message first")
    total_lists: int = Field(description="Lists in the messages read, on every page")
    messages_scanned: int = Field(description="Messages of the query whose list fields were read")
    next_page_token: str | None = budget.next_page_field("lists")
    page_budget_exhausted: bool = budget.page_cut_field(budget.fewer_than_there_are("lists"))
    warning: str | None = None
    cut: list[budget.Cut] = budget.cut_field()


@dataclass
class Group:
    """A list's messages among those read: how many, the newest (which orders the lists), and those
    that carry List-Unsubscribe (`offer`, the newest of them: the one the overview shows)."""

    count: int = 0
    newest: Fetched | None = None
    key: Key | None = None
    offer: Fetched | None = None
    offers: list[Fetched] = field(default_factory=list)

    @property
    def shown(self) -> Fetched | None:
        return self.offer or self.newest


@dataclass
class _Scan:
    groups: dict[str, Group] = field(default_factory=dict)
    matched: int = 0  # messages of the query
    scanned: int = 0
    page: list[tuple[str, Group, Fetched | None]] = field(default_factory=list)  # with the details
    more: bool = False


def order(item: Fetched) -> tuple[datetime, int]:
    return (item.internaldate or datetime.min.replace(tzinfo=UTC), item.uid)


def group_messages(session: ImapSession, uids: list[int], account: Account) -> dict[str, Group]:
    """The messages that carry List-Unsubscribe or List-Id, grouped by List-Id, else by sender."""
    groups: dict[str, Group] = {}
    for item in session.fetch(uids, ["INTERNALDATE", header_fields_item(SCAN_FIELDS)]).values():
        facts = list_facts(item.auth_header or b"")
        group = facts.group
        if group is None or (facts.unsubscribe_fields == 0 and facts.list_id is None):
            continue
        entry = groups.setdefault(group, Group())
        entry.count += 1
        if entry.newest is None or order(item) > order(entry.newest):
            entry.newest = item
            entry.key = key_of(item.internaldate, item.uid, account.name)
        if facts.unsubscribe_fields:
            entry.offers.append(item)
            if entry.offer is None or order(item) > order(entry.offer):
                entry.offer = item
    return groups


def _scan(session: ImapSession, account: Account, query: str, after: Key | None) -> _Scan:
    session.open(ALL_MAIL)
    uids = session.search_raw(query)
    scan = _Scan(matched=len(uids))
    newest = sorted(uids)[-MAX_SCANNED:]  # All Mail gives later arrivals higher UIDs
    scan.scanned = len(newest)
    scan.groups = group_messages(session, newest, account)
    ordered = sorted(
        ((name, group) for name, group in scan.groups.items() if group.key is not None),
        key=lambda pair: pair[1].key,  # type: ignore[arg-type, return-value]
        reverse=True,
    )
    remaining = [(name, group) for name, group in ordered if after is None or (group.key and group.key < after)]
    page = remaining[:PAGE_LISTS]
    scan.more = len(remaining) > PAGE_LISTS
    details = read_decision_fields(session, [group.shown.uid for _name, group in page if group.shown is not None])
    scan.page = [(name, group, details.get(group.shown.uid) if group.shown else None) for name, group in page]
    return scan


def read_decision_fields(session: ImapSession, uids: list[int]) -> dict[int, Fetched]:
    """What an unsubscribe is decided on, for these messages: one FETCH of header fields and ENVELOPE."""
    return session.fetch(uids, ["INTERNALDATE", "ENVELOPE", header_fields_item(DECISION_FIELDS)])


def mailto_shown(facts: ListFacts) -> MailtoOptOut | None:
    uri = facts.first("mailto")
    parsed = mailto(uri) if uri is not None else None
    if parsed is None or len(parsed.addresses) != 1:
        return None
    subject = parsed.subject if parsed.subject and parsed.subject.strip() else policy.OPT_OUT_TEXT
    return MailtoOptOut(address=clean(parsed.addresses[0]), subject=clean(subject))


def subscription(account: str, name: str, group: Group, item: Fetched | None, records: list[Left]) -> Subscription:
    facts = list_facts(item.auth_header or b"") if item is not None else None
    envelope = item.envelope if item is not None else None
    signer = facts.signed_by(LIST_UNSUBSCRIBE) if facts is not None else None
    # Left as mg_unsubscribe records it: this group as this signer vouches for it (unsubscribed.py).
    left = newest(records, account, name, signer.domain) if signer is not None else None
    why_not = policy.why_not_one_click(facts) if facts is not None else "the newest message vanished"
    web = facts.first("https") if facts is not None else None
    return Subscription(
        list_id=facts.list_id.id if facts and facts.list_id else None,
        list_name=facts.list_id.name if facts and facts.list_id else None,
        sender=envelope.from_ if envelope else None,
        messages=group.count,
        last_received_at=iso(group.newest.internaldate) if group.newest else None,
        message_id=envelope.message_id if envelope else None,
        one_click=why_not is None,
        why_not_one_click=why_not,
        mailto=mailto_shown(facts) if facts is not None else None,
        why_not_mailto=policy.why_not_mailto(facts) if facts is not None else "the newest message vanished",
        web_link=clean(web) if web else None,
        signed_by=signer.domain if signer else None,
        left_at=left.at if left else None,
    )


async def list_subscriptions(
    runtime: Runtime, account_name: str, query: str | None, page_token: str | None
) -> SubscriptionsResult:
    account = runtime.account(account_name)
    wanted = inputs.search_query(query) if query is not None else DEFAULT_QUERY
    stamp = fingerprint("mg_list_subscriptions", account=account.name, query=wanted)
    after = decode(page_token, stamp)
    warning = None
    try:
        records = LeftLists(runtime.state_folder()).of_account(account.name)
    except MailError as error:  # the overview still answers; mg_unsubscribe refuses until it is fixed
        records, warning = [], error.message
    scan = await in_session(runtime, account, lambda s: _scan(s, account, wanted, after))
    lists = [subscription(account.name, name, group, item, records) for name, group, item in scan.page]
    keys = [group.key for _name, group, _item in scan.page]

    def result_for(count: int) -> SubscriptionsResult:
        more = scan.more or count < len(lists)
        last = keys[count - 1] if count else None
        cut: list[budget.Cut] = []
        if more:
            cut.append(
                budget.Cut(
                    field="subscriptions",
                    shown=count,
                    total=len(scan.groups),
                    how_to_get_the_rest="call again with page_token = next_page_token",
                )
            )
        if scan.matched > scan.scanned:
            cut.append(
                budget.Cut(
                    field="messages_scanned",
                    shown=scan.scanned,
                    total=scan.matched,
                    how_to_get_the_rest=f"only the newest {MAX_SCANNED} messages of a query are read: a narrower "
                    "query (for example newer_than:30d, or older_than:30d newer_than:90d) reads the rest",
                )
            )
        return SubscriptionsResult(
            account=account.name,
            query=wanted,
            can_unsubscribe=account.can_unsubscribe,
            subscriptions=lists[:count],
            total_lists=len(scan.groups),
            messages_scanned=scan.scanned,
            next_page_token=encode(stamp, last) if more and last is not None else None,
            page_budget_exhausted=count < len(lists),
            warning=warning,
            cut=cut,
        )

    return budget.fit_list_page(result_for, len(lists), "subscriptions")
