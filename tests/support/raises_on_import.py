"""A module whose own code fails on import, as a half-configured settings module does."""

raise RuntimeError("DATABASE_URL is not set")
