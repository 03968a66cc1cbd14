"""A LangGraph.js thread paused on its second question is left alone by the interrupt-id
checks: LangGraph.js makes its ids its own way, so `--interrupt-ids` finds nothing in it,
re-keys nothing, and the run says so once (on PostgreSQL, whose first look decides
which heads to load), however many such threads it meets; the
application then takes its answer."""

from __future__ import annotations

from tests.support.cli_runs import last_json, run_cli
from tests.support.js_app import JsApp, stored_rows

LEFT = "LangGraph.js threads' interrupt ids are left alone"


def test_js_threads_waiting_on_a_later_question_are_left_alone_said_once(
    pg_js_app: JsApp,
) -> None:
    js_app = pg_js_app
    for thread in ("one", "two"):
        assert js_app.run("ask", thread)["interrupts"][0]["value"] == "q1"
        assert js_app.run("answer", thread, "yes")["interrupts"][0]["value"] == "q2"
    before = stored_rows(js_app.target)

    scanned = run_cli("scan", js_app.target, "--min-idle", "0", "--interrupt-ids", "first")
    repaired = run_cli(
        "repair", js_app.target, "--min-idle", "0", "--interrupt-ids", "per-question",
        "--policy", "stale_resume=keep", "--json",
    )  # fmt: skip
    after = stored_rows(js_app.target)
    answered = js_app.run("answer", "one", "no")

    assert scanned.returncode == 0, scanned.stderr
    assert scanned.stderr.count(LEFT) == 1
    assert repaired.stderr.count(LEFT) == 1
    report = last_json(repaired.stdout)
    assert report["actions"] == {} and report["writes_rewritten"] == 0
    assert not [code for code in report.get("findings", {}) if code.startswith("interrupt_id")]
    assert after == before
    assert answered["out"] == "q1 got yes, q2 got no"
