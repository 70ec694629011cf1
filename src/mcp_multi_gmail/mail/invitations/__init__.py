"""Invitations: answering one (`respond`: mg_respond_invitation, an iTIP REPLY through the send path).
Reading them is shared by every family that shows a message, in `core.invitations`."""

from . import respond
from .respond import RespondResult

__all__ = ["RespondResult", "respond"]
