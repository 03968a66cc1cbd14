"""Fixtures of the LangGraph.js tests: the application installed once, then one per
store, a fresh PostgreSQL schema or a fresh SQLite file."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.js_app import STORES, JsApp, installed


@pytest.fixture(scope="session")
def js_installed() -> None:
    installed()


@pytest.fixture(params=STORES)
def js_app(js_installed: None, request: pytest.FixtureRequest, tmp_path: Path) -> JsApp:
    """The LangGraph.js application on this test's fresh store, each saver in turn."""
    if request.param == "sqlite":
        return JsApp.on_file(tmp_path / "js-threads.sqlite")
    return JsApp.on(request.getfixturevalue("pg_uri"))


@pytest.fixture
def pg_js_app(js_installed: None, pg_uri: str) -> JsApp:
    """The application on PostgreSQL alone, for what only that store has."""
    return JsApp.on(pg_uri)
