"""What every tool family stands on: one IMAP session per call and one mailbox or all of them
(`session`), the result budget and the cut (`budget`), page tokens (`cursor`), argument forms
(`inputs`), a fetched message as the assistant sees it (`summary`), previews (`preview`), and what
several families look up in an open folder (`lookup`: a message, threads, a label), and the one
routine that changes labels and flags on a set of messages, reads them back and reports what
changed (`writes`: every write tool and mg_undo use it).

This face hands nothing on: each module is imported by name (`from ..core import budget`), so
that the MCP surface can take `budget` at start-up while what parses mail waits for a tool call.
"""
