"""A deploy that changed the graph: stored heads checked against the application's graph
(`--graph`), and their work moved where the operator names a renamed node."""

from ..codes import DRIFT_CODES

__all__ = ["DRIFT_CODES"]
