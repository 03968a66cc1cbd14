"""A deploy that changed the graph: stored heads checked against the application's graph
(`--graph`), and their work moved where the operator names a renamed node."""

DRIFT_CODES = ("node_missing", "channel_missing")
"""The findings of a head the graph would strand: `scan --graph` exits 1 on either."""
