"""Subscriptions: the lists a mailbox receives, from header fields (`overview`), leaving one, once
(`unsubscribe`), and the lists left, kept in the state folder (`unsubscribed`)."""

from . import overview, unsubscribe
from .overview import SubscriptionsResult
from .unsubscribe import UnsubscribeResult

__all__ = ["SubscriptionsResult", "UnsubscribeResult", "overview", "unsubscribe"]
