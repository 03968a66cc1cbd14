"""The prune tests' `store`: each saver whose rows a prune deletes, sync and async, with a
sync reader on the same database."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.support.pruning import PRUNE_KINDS, PrunedStore, pruned_store


@pytest.fixture(params=PRUNE_KINDS)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[PrunedStore]:
    async with pruned_store(request.param, tmp_path, request) as opened:
        yield opened
