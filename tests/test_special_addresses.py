"""Which addresses the one web request may contact (gmail/special_addresses.py), as a table.

The expected answers are written out by hand from the IANA special-purpose registries
(https://www.iana.org/assignments/iana-ipv4-special-registry/ and
https://www.iana.org/assignments/iana-ipv6-special-registry/), with each block's first and last
address and the addresses just outside it, not derived from the module's own table. Python's
`ipaddress.is_global` is not the oracle: it changed between patch releases.
"""

from __future__ import annotations

from ipaddress import IPv4Address, IPv6Address, ip_address

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_multi_gmail.gmail.special_addresses import SPECIAL, refusal

# (address, words the reason must hold)
REFUSED_V4 = [
    ("0.0.0.0", "'this host on this network'"),
    ("0.1.2.3", "'this network' (0.0.0.0/8"),
    ("0.255.255.255", "'this network'"),
    ("10.0.0.0", "private-use (10.0.0.0/8, RFC 1918)"),
    ("10.0.0.1", "private-use (10.0.0.0/8, RFC 1918)"),
    ("10.255.255.255", "private-use"),
    ("100.64.0.0", "shared address space"),
    ("100.64.0.1", "shared address space (carrier-grade NAT) (100.64.0.0/10, RFC 6598)"),
    ("100.127.255.255", "shared address space"),
    ("127.0.0.1", "loopback (127.0.0.0/8, RFC 1122)"),
    ("127.255.255.254", "loopback"),
    ("169.254.0.0", "link-local"),
    ("169.254.169.254", "link-local (where cloud metadata services answer) (169.254.0.0/16, RFC 3927)"),
    ("169.254.255.255", "link-local"),
    ("172.16.0.0", "private-use (172.16.0.0/12"),
    ("172.31.255.255", "private-use (172.16.0.0/12"),
    ("192.0.0.0", "IPv4 service continuity prefix"),
    ("192.0.0.8", "IPv4 dummy address"),
    ("192.0.0.9", "Port Control Protocol anycast"),
    ("192.0.0.10", "TURN anycast"),
    ("192.0.0.170", "NAT64/DNS64 discovery"),
    ("192.0.0.171", "NAT64/DNS64 discovery"),
    ("192.0.0.255", "IETF protocol assignments (192.0.0.0/24"),
    ("192.0.2.0", "documentation (TEST-NET-1)"),
    ("192.0.2.255", "documentation (TEST-NET-1)"),
    ("192.31.196.1", "AS112-v4"),
    ("192.52.193.1", "AMT"),
    ("192.88.99.1", "deprecated 6to4 relay anycast"),
    ("192.168.0.0", "private-use (192.168.0.0/16"),
    ("192.168.255.255", "private-use (192.168.0.0/16"),
    ("192.175.48.1", "direct delegation AS112 service"),
    ("198.18.0.0", "benchmarking (198.18.0.0/15"),
    ("198.19.255.255", "benchmarking"),
    ("198.51.100.7", "documentation (TEST-NET-2)"),
    ("203.0.113.255", "documentation (TEST-NET-3)"),
    ("224.0.0.1", "multicast (224.0.0.0/4"),
    ("239.255.255.255", "multicast"),
    ("240.0.0.0", "reserved (240.0.0.0/4"),
    ("254.255.255.255", "reserved"),
    ("255.255.255.255", "limited broadcast"),
]

GLOBAL_V4 = [
    "1.1.1.1",
    "8.8.8.8",
    "9.255.255.255",
    "11.0.0.0",
    "93.184.216.34",
    "100.63.255.255",
    "100.128.0.0",
    "126.255.255.255",
    "128.0.0.0",
    "169.253.255.255",
    "169.255.0.0",
    "172.15.255.255",
    "172.32.0.0",
    "191.255.255.255",
    "192.0.1.0",
    "192.0.3.0",
    "192.31.195.255",
    "192.31.197.0",
    "192.88.98.255",
    "192.88.100.0",
    "192.167.255.255",
    "192.169.0.0",
    "198.17.255.255",
    "198.20.0.0",
    "198.51.99.255",
    "198.51.101.0",
    "203.0.112.255",
    "203.0.114.0",
    "223.255.255.255",
]

REFUSED_V6 = [
    ("::", "unspecified (::/128"),
    ("::1", "loopback (::1/128, RFC 4291)"),
    (
        "::ffff:127.0.0.1",
        "IPv4-mapped (::ffff:0:0/96, RFC 4291), a form of the IPv4 address 127.0.0.1, which is loopback",
    ),
    ("::ffff:10.0.0.1", "a form of the IPv4 address 10.0.0.1, which is private-use"),
    ("::ffff:169.254.169.254", "a form of the IPv4 address 169.254.169.254, which is link-local"),
    ("::ffff:8.8.8.8", "IPv4-mapped (::ffff:0:0/96, RFC 4291), a form of the IPv4 address 8.8.8.8;"),
    ("::ffff:7f00:1", "a form of the IPv4 address 127.0.0.1"),  # the same address written in hex
    ("::127.0.0.1", "IPv4-compatible (deprecated) (::/96"),
    ("::8.8.8.8", "IPv4-compatible"),
    (
        "64:ff9b::127.0.0.1",
        "IPv4/IPv6 translation (NAT64) (64:ff9b::/96, RFC 6052), a form of the IPv4 address 127.0.0.1",
    ),
    ("64:ff9b::8.8.8.8", "NAT64"),
    ("64:ff9b:1::1", "local-use IPv4/IPv6 translation"),
    ("100::1", "discard-only (100::/64"),
    ("100::ffff:ffff:ffff:ffff", "discard-only"),
    ("100:0:0:1::1", "dummy IPv6 prefix"),
    ("2001::1", "Teredo (2001::/32"),
    ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"),
    ("2001:1::1", "Port Control Protocol anycast"),
    ("2001:1::2", "TURN anycast"),
    ("2001:1::3", "DNS-SD service registration anycast"),
    ("2001:1::4", "IETF protocol assignments (2001::/23"),
    ("2001:2::1", "benchmarking (2001:2::/48"),
    ("2001:3::1", "AMT (2001:3::/32"),
    ("2001:4:112::1", "AS112-v6"),
    ("2001:10::1", "deprecated ORCHID"),
    ("2001:20::1", "ORCHIDv2"),
    ("2001:30::1", "drone remote ID entity tags"),
    ("2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", "IETF protocol assignments (2001::/23"),
    ("2001:db8::1", "documentation (2001:db8::/32"),
    ("2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "documentation"),
    ("2002:7f00:1::1", "6to4 (2002::/16, RFC 3056), a form of the IPv4 address 127.0.0.1, which is loopback"),
    ("2002:808:808::1", "6to4"),  # 6to4 of a global address: refused all the same
    ("2620:4f:8000::1", "direct delegation AS112 service"),
    ("3fff::1", "documentation (3fff::/20"),
    ("3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", "documentation (3fff::/20"),
    ("5f00::1", "segment routing (SRv6) SIDs"),
    ("fc00::1", "unique-local (fc00::/7"),
    ("fd12:3456:789a::1", "unique-local"),
    ("fe80::1", "link-local (fe80::/10"),
    ("fe80::1%eth0", "link-local (fe80::/10"),
    ("febf:ffff::1", "link-local"),
    ("fec0::1", "deprecated site-local"),
    ("ff02::1", "multicast (ff00::/8"),
    ("ff0e::1", "multicast"),
    ("1::1", "outside the global unicast space (2000::/3"),
    ("1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "outside the global unicast space"),
    ("4000::1", "outside the global unicast space"),
    ("e000::1", "outside the global unicast space"),
]

GLOBAL_V6 = [
    "2606:4700::1111",
    "2001:4860:4860::8888",
    "2a00:1450:4001:82b::200e",
    "2000::1",
    "2001:200::1",  # just past 2001::/23
    "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff",
    "2001:db9::1",
    "2003::1",
    "2620:4f:7fff:ffff:ffff:ffff:ffff:ffff",
    "2620:4f:8001::",
    "3ffe:ffff::1",
    "3fff:1000::1",  # just past 3fff::/20
    "3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
]


@pytest.mark.parametrize(("address", "reason"), REFUSED_V4 + REFUSED_V6, ids=[a for a, _ in REFUSED_V4 + REFUSED_V6])
def test_refused_addresses_with_their_reason(address: str, reason: str) -> None:
    why = refusal(ip_address(address))
    assert why is not None and reason in why


@pytest.mark.parametrize("address", GLOBAL_V4 + GLOBAL_V6)
def test_globally_reachable_addresses(address: str) -> None:
    assert refusal(ip_address(address)) is None


def test_every_network_of_the_table_is_refused_at_both_ends() -> None:
    for special in SPECIAL:
        assert refusal(special.network.network_address) is not None, special
        assert refusal(special.network.broadcast_address) is not None, special


def test_the_table_holds_the_registries_blocks() -> None:
    """The blocks named in the registries (and the issue) are all there, written as networks."""
    v4 = {str(s.network) for s in SPECIAL if s.network.version == 4}
    v6 = {str(s.network) for s in SPECIAL if s.network.version == 6}
    assert {
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
        "192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24",
        "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
    } <= v4  # fmt: skip
    assert {
        "::/128", "::1/128", "::ffff:0:0/96", "64:ff9b::/96", "100::/64", "2001::/32", "2001:db8::/32",
        "2002::/16", "fc00::/7", "fe80::/10", "ff00::/8",
    } <= v6  # fmt: skip


@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_every_ipv4_embedding_is_refused(value: int) -> None:
    """Whatever IPv4 address it carries, a mapped, compatible, NAT64 or 6to4 form is refused."""
    v4 = IPv4Address(value)
    forms = [
        IPv6Address((0xFFFF << 32) | value),  # ::ffff:a.b.c.d
        IPv6Address(int(IPv6Address("64:ff9b::")) | value),
        IPv6Address((0x2002 << 112) | (value << 80) | 1),
    ]
    if value > 1:
        forms.append(IPv6Address(value))  # ::a.b.c.d
    for form in forms:
        assert refusal(form) is not None, (v4, form)


@given(st.integers(min_value=0, max_value=2**96 - 1))
def test_every_teredo_address_is_refused(low: int) -> None:
    assert refusal(IPv6Address((0x20010000 << 96) | low)) is not None
