"""Fixtures of the LangGraph.js tests: the application installed once, one per schema."""

from __future__ import annotations

import pytest

from tests.support.js_app import JsApp, installed


@pytest.fixture(scope="session")
def js_installed() -> None:
    installed()


@pytest.fixture
def js_app(js_installed: None, pg_uri: str) -> JsApp:
    """The LangGraph.js application on this test's fresh schema."""
    return JsApp.on(pg_uri)
