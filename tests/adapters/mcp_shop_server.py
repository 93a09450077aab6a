"""A small MCP server for the MCP adapter's tests (started and stopped by the test): over stdio, or with
``--http PORT`` over streamable HTTP on 127.0.0.1 only."""

import sys

from mcp.server.mcpserver import MCPServer

app = MCPServer("shop")


@app.tool()
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"status": "ok", "order_id": order_id, "state": "shipped", "source": "mcp"}


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        app.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        app.run()
