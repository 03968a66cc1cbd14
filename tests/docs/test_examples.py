"""The examples run and show what they promise (the README's first command among them)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).parents[2] / "examples"


def run_example(script: str, *args: str, cwd: Path) -> str:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / script), *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        cwd=cwd,
    )
    return done.stdout


def test_quickstart_bricks_repairs_and_runs_the_thread_again(tmp_path: Path) -> None:
    store = tmp_path / "quickstart.sqlite"
    out = run_example("quickstart.py", str(store), cwd=tmp_path)
    assert out.count("fails with INVALID_CHAT_HISTORY") == 2
    assert "Actions: ['placeholder call_1']" in out
    assert "Through PatchingCheckpointer(saver) the next run works" in out
    assert "['human', 'ai', 'tool', 'human', 'human', 'human', 'ai']" in out
    assert store.exists()


def test_safe_resume_cancels_then_rejects_one_call(tmp_path: Path) -> None:
    store = tmp_path / "safe_resume.sqlite"
    out = run_example("safe_resume.py", str(store), cwd=tmp_path)
    assert "Cancelled: ['placeholder call_1']" in out
    assert "was cancelled before it completed: the user changed the subject." in out
    assert "ai: 'Why do cows wear bells? Their horns do not work.'" in out
    assert "Rejected ['call_2']; still to run: ['call_3']" in out
    assert "send_email" in out and "(tool ran: send_email" not in out
    assert out.count("(tool ran: get_weather Oslo)") == 1
    assert out.count("answers call_2") == 1 and out.count("answers call_3") == 1
    assert store.exists()


def repaired_rows(out: str) -> int:
    """Rows of the repair run's thread table: one per thread it repaired."""
    rows = [line.split() for line in out.splitlines()]
    return sum(1 for row in rows if row[3:5] == ["repaired", "messages:"])


def test_repair_store_runs_the_batch_on_the_quickstart_file(tmp_path: Path) -> None:
    run_example("quickstart.py", cwd=tmp_path)
    out = run_example("repair_store.py", cwd=tmp_path)
    assert "threads needing repair  3" in out
    assert "threads restored  3" in out
    assert '"threads_repaired": 3' in out
    assert repaired_rows(out) == 3
    assert out.count("(exit 0)") == 5


def test_repair_store_runs_again_on_the_same_file(tmp_path: Path) -> None:
    run_example("quickstart.py", cwd=tmp_path)
    run_example("repair_store.py", cwd=tmp_path)
    again = run_example("repair_store.py", cwd=tmp_path)
    assert "threads needing repair  3" in again
    assert repaired_rows(again) == 3
    assert again.count("(exit 0)") == 5
