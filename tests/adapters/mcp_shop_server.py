"""A small MCP server over stdio for the MCP adapter's tests (started and stopped by the test)."""

from mcp.server.mcpserver import MCPServer

app = MCPServer("shop")


@app.tool()
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"status": "ok", "order_id": order_id, "state": "shipped", "source": "mcp"}


if __name__ == "__main__":
    app.run()
