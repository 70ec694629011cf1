"""The floor for start-up: an MCP server on the same SDK with nothing in it (row g2 of run.py)."""

from mcp.server.mcpserver import MCPServer

if __name__ == "__main__":
    MCPServer(name="minimal").run()
