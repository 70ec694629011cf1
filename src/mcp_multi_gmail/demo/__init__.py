"""The demo: sample mailboxes in the embedded Gmail emulator, wired to the real server.

`setup` starts the emulator with the demo seed and writes the configuration, `serve` serves MCP
over stdio against it (`mcp-multi-gmail --demo`), `tour` walks a person at a terminal through
one pass (`mcp-multi-gmail demo`) in the words of `tour_text`.
"""
