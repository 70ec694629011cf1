"""Small value types shared by every layer (protocol parsing, service, tool results)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Address(BaseModel):
    """One mailbox of an address header, as the mail itself states it (never verified)."""

    model_config = ConfigDict(frozen=True)

    name: str | None = Field(default=None, description="Display name, decoded; null when the header has none")
    address: str | None = Field(default=None, description="mailbox@host (host lower-cased)")


class Authentication(BaseModel):
    """SPF / DKIM / DMARC exactly as Gmail recorded them on receipt: its own Authentication-Results,
    counted only below Gmail's own delivery trace (a sender can write the header, not the trace above it)."""

    model_config = ConfigDict(frozen=True)

    spf: str | None = Field(default=None, description="SPF result token (pass, fail, softfail, …) or null")
    dkim: str | None = Field(default=None, description="DKIM result token; a pass wins over other signatures")
    dmarc: str | None = Field(default=None, description="DMARC result token or null")
    dkim_domain: str | None = Field(default=None, description="Signing domain of the passing DKIM signature")
    dkim_aligned: bool | None = Field(
        default=None,
        description="The passing DKIM domain is the From domain or its parent/child; null without a DKIM pass",
    )
    other_reports: int = Field(
        default=0,
        description="Authentication-Results headers ignored: written by other hosts, or claiming to be Gmail's "
        "without Gmail's delivery trace above them (forged by the sender)",
    )
    unchecked: bool = Field(
        default=False,
        description="No verdict from Gmail (your own sent mail, imported mail, or a forged header); results null",
    )
