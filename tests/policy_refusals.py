"""The one assertion every policy test makes of a refusal: its error code and what its message says.

Shared by tests/test_policy*.py (the mutation run of policy/ runs exactly those files:
docs/en/development.md, "Mutation testing of the policy").
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mcp_multi_gmail.errors import MailError


def refused(call: Callable[[], object], code: str, *fragments: str) -> MailError:
    """Run `call`, expect a MailError with `code` whose message contains every fragment."""
    with pytest.raises(MailError) as info:
        call()
    err = info.value
    assert err.code == code, err.message
    for fragment in fragments:
        assert fragment in err.message, (fragment, err.message)
    return err
