"""The IMAP side of the protocol layer, behind one face.

- `session`: ImapSession, the one stateful class (folders, search, fetch, IDLE, writes);
- `login`: connect, LOGIN, LOGOUT, and `logged_in`, the lifetime of one session;
- `worker`: `run_on_worker`, the async doorway onto a worker thread within the connection cap;
- `answers`: the FETCH-answer model; `batches`: command-line batching; `failures`: what a
  refusal or a broken connection means for the call; `tokens`: a fast lexer for imapclient's
  response parser.

imapclient itself is imported at the first connection, not here: the server answers
`initialize` before any mailbox is touched.
"""

from .answers import AUTH_HEADER, Fetched, header_fields_item
from .batches import IDS_PER_SEARCH, UIDS_PER_COMMAND, id_batches, uid_batches
from .login import check_access_token, logged_in
from .session import ALL_MAIL, DRAFTS, SENT, TRASH, ImapSession
from .worker import finish_logouts, run_on_worker

__all__ = [
    "ALL_MAIL",
    "AUTH_HEADER",
    "DRAFTS",
    "IDS_PER_SEARCH",
    "SENT",
    "TRASH",
    "UIDS_PER_COMMAND",
    "Fetched",
    "ImapSession",
    "check_access_token",
    "finish_logouts",
    "header_fields_item",
    "id_batches",
    "logged_in",
    "run_on_worker",
    "uid_batches",
]
