"""``citeseal serve``: an MCP server (stdio) over one trusted, frozen snapshot.

Layers (docs/serve.md)::

    served.py    the snapshot every call reads (its connections, the --online hooks)
    service.py   pure-ish core: bounded inputs → JSON-ready results + a text block, through
                 the existing search (pipeline.snapshot.search) and the audit engine
    describe.py  describe_contract and snapshot_info (instructions, rules, limits, identity)
    entities.py  PubTator3 entities of fetched passages
    calls.py     one call's failure (stable codes, one table), deadline and log line
    logs.py      stderr logging: text or JSON lines, redacted
    server.py    the MCP surface (mcp.server.mcpserver.MCPServer): one tool per service
                 function, read-only annotations, every call under its deadline, failures →
                 ``isError`` results with their code
    online.py    ``--online``: ids and searches the snapshot cannot answer are harvested live
                 by the build into a sealed child of its lineage, which the server then reads

The snapshot is checked with :func:`pipeline.snapshot.trust.trust_snapshot` before the server
starts; every call opens its own read-only connection (and checks that the file is still the
one that was trusted), so concurrent calls share nothing mutable. Without ``--online`` the
server never touches the network and writes nothing; it never writes to stdout outside the
protocol.
"""
