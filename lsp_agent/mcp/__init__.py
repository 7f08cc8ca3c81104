"""The MCP client: configured servers started in the background, their tools offered to the
model as ``<server>_<tool>`` (docs/mcp.md). The only package that imports the ``mcp`` SDK;
the registry sees it through its ``ToolSource`` port.
"""
