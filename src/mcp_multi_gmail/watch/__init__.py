"""The `--wait` watcher: `loop` (the rounds, exit codes and the one line), `args` (the command
line and the plan checked from it), `check` (the pass's own window scan), `idle` (IMAP IDLE
wake-ups between rounds) and `state` (the claim and the known-work files).
"""
