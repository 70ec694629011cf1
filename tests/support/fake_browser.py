"""A stand-in browser for `--sign-in` tests (BROWSER names it): opens the Google address it is given,
follows the consent page's redirect back to the loopback listener, and notes where it went.

FAKE_BROWSER: "allow" (as a user who clicks Allow), "wrong_state" (comes back with another state),
"stay_away" (never comes back). FAKE_BROWSER_LOG: a file for the redirect's host, port and
parameter names (never their values: the code is a credential).
"""

from __future__ import annotations

import os
import ssl
import sys
import urllib.error
import urllib.request
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit


class _Stay(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None  # the redirect is followed by hand below


def main(url: str) -> None:
    mode = os.environ.get("FAKE_BROWSER", "allow")
    if mode == "stay_away":
        return
    tls = ssl.create_default_context(cafile=os.environ["MG_GMAIL_CA_FILE"])
    opener = urllib.request.build_opener(
        urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=tls), _Stay()
    )
    try:
        with opener.open(url, timeout=10):
            return  # no redirect: nothing to come back with
    except urllib.error.HTTPError as answer:
        with answer:  # the redirect's answer holds its connection: closed now, not when collected
            location = answer.headers["Location"]
    parts = urlsplit(location)
    query = dict(parse_qsl(parts.query))
    with open(os.environ["FAKE_BROWSER_LOG"], "a", encoding="utf-8") as log:
        log.write(f"{parts.scheme}://{parts.netloc}{parts.path} {' '.join(sorted(query))}\n")
    if mode == "wrong_state":
        query["state"] = "not-the-one-asked-for"
    back = urlunsplit((parts.scheme, parts.netloc, parts.path or "/", urlencode(query), ""))
    with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(back, timeout=10) as page:
        page.read()


if __name__ == "__main__":
    main(sys.argv[1])
