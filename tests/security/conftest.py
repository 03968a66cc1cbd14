"""Fixtures of the security tests: real PostgreSQL roles (`make_role`)."""

from tests.support.roles import make_role

__all__ = ["make_role"]
