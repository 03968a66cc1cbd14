"""The README's first command: the quickstart runs and shows what it promises."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).parent.parent / "examples"


def test_quickstart_bricks_repairs_and_runs_the_thread_again(tmp_path: Path) -> None:
    store = tmp_path / "quickstart.sqlite"
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "quickstart.py"), str(store)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    out = done.stdout
    assert out.count("fails with INVALID_CHAT_HISTORY") == 2
    assert "Actions: ['placeholder call_1']" in out
    assert "Through PatchingCheckpointer(saver) the next run works" in out
    assert "['human', 'ai', 'tool', 'human', 'human', 'human', 'ai']" in out
    assert store.exists()
