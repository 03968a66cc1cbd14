"""Fixtures of the interrupt-id tests: real PostgreSQL roles (`make_role`)."""

from __future__ import annotations

from tests.support.roles import make_role

__all__ = ["make_role"]
