"""The MCP surface: one module per tool family, each tool a thin adapter over the service layer."""
