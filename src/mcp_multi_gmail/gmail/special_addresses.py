"""Which IP addresses the one web request (gmail/web.py) may contact: globally reachable ones only.

The networks below are the IANA special-purpose address registries, written out as a table, every
entry refused whatever its "globally reachable" column says (an unsubscribe endpoint never lives
in an anycast relay or an AS112 block, so refusing those costs nothing):
- IPv4: https://www.iana.org/assignments/iana-ipv4-special-registry/
- IPv6: https://www.iana.org/assignments/iana-ipv6-special-registry/
Beside them, multicast (https://www.iana.org/assignments/multicast-addresses/ and RFC 4291
§2.7), the deprecated site-local block (RFC 3879), and any IPv6 address outside 2000::/3, the only
space IANA allocates as global unicast (https://www.iana.org/assignments/ipv6-address-space/).

Addresses that embed an IPv4 address are refused outright, whatever they embed: IPv4-mapped
(::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d) forms, NAT64, 6to4 and Teredo. The embedded
address is unwrapped here only to say what it was. Python's own `is_global` / `is_private` are
not used: their handling of these forms changed between patch releases (3.11.10, 3.12.4).
"""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_network

Address = IPv4Address | IPv6Address


@dataclass(frozen=True)
class Special:
    """One refused network: what it is and where it is defined."""

    network: IPv4Network | IPv6Network
    name: str
    reference: str

    def describe(self) -> str:
        return f"{self.name} ({self.network}, {self.reference})"


def _table(rows: tuple[tuple[str, str, str], ...]) -> tuple[Special, ...]:
    # Most specific first, so an address is named by the narrowest entry that holds it.
    specials = [Special(ip_network(network), name, reference) for network, name, reference in rows]
    return tuple(sorted(specials, key=lambda special: -special.network.prefixlen))


# Both registries in one table; an address is looked up among the networks of its own version.
SPECIAL = _table(
    (
        # IPv4
        ("0.0.0.0/8", "'this network'", "RFC 791"),
        ("0.0.0.0/32", "'this host on this network'", "RFC 1122"),
        ("10.0.0.0/8", "private-use", "RFC 1918"),
        ("100.64.0.0/10", "shared address space (carrier-grade NAT)", "RFC 6598"),
        ("127.0.0.0/8", "loopback", "RFC 1122"),
        ("169.254.0.0/16", "link-local (where cloud metadata services answer)", "RFC 3927"),
        ("172.16.0.0/12", "private-use", "RFC 1918"),
        ("192.0.0.0/24", "IETF protocol assignments", "RFC 6890"),
        ("192.0.0.0/29", "IPv4 service continuity prefix", "RFC 7335"),
        ("192.0.0.8/32", "IPv4 dummy address", "RFC 7600"),
        ("192.0.0.9/32", "Port Control Protocol anycast", "RFC 7723"),
        ("192.0.0.10/32", "TURN anycast", "RFC 8155"),
        ("192.0.0.170/32", "NAT64/DNS64 discovery", "RFC 8880"),
        ("192.0.0.171/32", "NAT64/DNS64 discovery", "RFC 8880"),
        ("192.0.2.0/24", "documentation (TEST-NET-1)", "RFC 5737"),
        ("192.31.196.0/24", "AS112-v4", "RFC 7535"),
        ("192.52.193.0/24", "AMT", "RFC 7450"),
        ("192.88.99.0/24", "deprecated 6to4 relay anycast", "RFC 7526"),
        ("192.168.0.0/16", "private-use", "RFC 1918"),
        ("192.175.48.0/24", "direct delegation AS112 service", "RFC 7534"),
        ("198.18.0.0/15", "benchmarking", "RFC 2544"),
        ("198.51.100.0/24", "documentation (TEST-NET-2)", "RFC 5737"),
        ("203.0.113.0/24", "documentation (TEST-NET-3)", "RFC 5737"),
        ("224.0.0.0/4", "multicast", "RFC 5771"),
        ("240.0.0.0/4", "reserved", "RFC 1112"),
        ("255.255.255.255/32", "limited broadcast", "RFC 919"),
        # IPv6
        ("::1/128", "loopback", "RFC 4291"),
        ("::/128", "unspecified", "RFC 4291"),
        ("::/96", "IPv4-compatible (deprecated)", "RFC 4291"),
        ("::ffff:0:0/96", "IPv4-mapped", "RFC 4291"),
        ("64:ff9b::/96", "IPv4/IPv6 translation (NAT64)", "RFC 6052"),
        ("64:ff9b:1::/48", "local-use IPv4/IPv6 translation", "RFC 8215"),
        ("100::/64", "discard-only", "RFC 6666"),
        ("100:0:0:1::/64", "dummy IPv6 prefix", "RFC 9780"),
        ("2001::/23", "IETF protocol assignments", "RFC 2928"),
        ("2001::/32", "Teredo", "RFC 4380"),
        ("2001:1::1/128", "Port Control Protocol anycast", "RFC 7723"),
        ("2001:1::2/128", "TURN anycast", "RFC 8155"),
        ("2001:1::3/128", "DNS-SD service registration anycast", "RFC 9665"),
        ("2001:2::/48", "benchmarking", "RFC 5180"),
        ("2001:3::/32", "AMT", "RFC 7450"),
        ("2001:4:112::/48", "AS112-v6", "RFC 7535"),
        ("2001:10::/28", "deprecated ORCHID", "RFC 4843"),
        ("2001:20::/28", "ORCHIDv2", "RFC 7343"),
        ("2001:30::/28", "drone remote ID entity tags", "RFC 9374"),
        ("2001:db8::/32", "documentation", "RFC 3849"),
        ("2002::/16", "6to4", "RFC 3056"),
        ("2620:4f:8000::/48", "direct delegation AS112 service", "RFC 7534"),
        ("3fff::/20", "documentation", "RFC 9637"),
        ("5f00::/16", "segment routing (SRv6) SIDs", "RFC 9602"),
        ("fc00::/7", "unique-local", "RFC 4193"),
        ("fe80::/10", "link-local", "RFC 4291"),
        ("fec0::/10", "deprecated site-local", "RFC 3879"),
        ("ff00::/8", "multicast", "RFC 4291"),
    )
)

GLOBAL_UNICAST = IPv6Network("2000::/3")


def _special(address: Address) -> Special | None:
    # Compared as parsed addresses (their integers), never as text: "::ffff:7f00:1" is "::ffff:127.0.0.1".
    plain = address if isinstance(address, IPv4Address) else IPv6Address(int(address))  # without a %scope
    for special in SPECIAL:
        if special.network.version == plain.version and plain in special.network:
            return special
    return None


def _embedded(address: IPv6Address) -> IPv4Address | None:
    """The IPv4 address inside a mapped, compatible, NAT64, 6to4 or Teredo form (only to name it)."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]  # the client's address (the server's is the other half)
    value = int(address)
    if value >> 32 == 0 or value >> 32 == int(IPv6Address("64:ff9b::")) >> 32:
        return IPv4Address(value & 0xFFFFFFFF)
    return None


def refusal(address: Address) -> str | None:
    """Why `address` may never be contacted, in a short English clause; None when it is globally reachable."""
    special = _special(address)
    if special is None and isinstance(address, IPv6Address) and address not in GLOBAL_UNICAST:
        return f"outside the global unicast space ({GLOBAL_UNICAST}, IANA IPv6 address space)"
    if special is None:
        return None
    reason = special.describe()
    if isinstance(address, IPv6Address):
        inner = _embedded(address)
        if inner is not None and int(address) > 1:
            inner_special = _special(inner)
            what = f", which is {inner_special.describe()}" if inner_special is not None else ""
            reason = f"{reason}, a form of the IPv4 address {inner}{what}; such forms are never contacted"
    return reason
