"""Drives `cairn serve` with the official Python MCP SDK.

usage: mcp_client.py stdio <cairn> <project> [serve args...]
       mcp_client.py http <url> [bearer token]

Initializes, lists tools, searches, expands the first hit, and prints one JSON
object with what it saw (the Rust test asserts on it).
"""

import asyncio
import json
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def drive(read, write, out):
    async with ClientSession(read, write) as session:
        t0 = time.perf_counter()
        init = await session.initialize()
        out["initialize_ms"] = (time.perf_counter() - t0) * 1000
        out["server"] = init.server_info.name
        out["protocol"] = init.protocol_version
        tools = await session.list_tools()
        out["tools"] = sorted(t.name for t in tools.tools)
        res = await session.call_tool("search", {"query": "how long do sessions stay cached"})
        found = json.loads(res.content[0].text)
        out["search"] = found
        first = found["matches"][0]["id"]
        res = await session.call_tool("expand", {"chunk_id": first})
        out["expand"] = json.loads(res.content[0].text)
        res = await session.call_tool("get", {"path": "../outside.md"})
        out["get_refused"] = {"is_error": res.is_error, "text": res.content[0].text}


async def main():
    mode = sys.argv[1]
    out = {}
    if mode == "stdio":
        params = StdioServerParameters(
            command=sys.argv[2], args=["serve", *sys.argv[4:]], cwd=sys.argv[3]
        )
        async with stdio_client(params) as (read, write):
            await drive(read, write, out)
    else:
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        headers = {"Authorization": f"Bearer {sys.argv[3]}"} if len(sys.argv) > 3 else None
        async with create_mcp_http_client(headers=headers) as client:
            async with streamable_http_client(sys.argv[2], http_client=client) as streams:
                await drive(streams[0], streams[1], out)
    print(json.dumps(out))


asyncio.run(main())
