"""Each role's working day in the browser (issue 27), once on a phone in English and once on a laptop in Chinese,
on one shared set-up with a real worker and the LLM simulator: the expert reviews with keys, labels with keys,
puts a comparison aside and goes back; the lead closes the round and adjudicates its conflict; the researcher
builds a set with an attention check, calibrates two judges, selects the primary judge, downloads the report,
evaluates two models and reads and downloads the report; the admin adds items to a draft release, freezes it,
downloads the archive and checks it with ``verify_release``. No console error and no sideways scroll on any page.

Every document and XHR response's server time is written to ``day-timings.json`` in the test's directory and the
slowest are printed; ``scripts/bench_day.py`` walks the same day on the demo data and counts those over 0.5 s (no
timing is asserted here)."""

import json

import pytest

from annotation.screening.criteria import default_criteria_create
from annotation.screening.models import Criterion
from tests.browser.day import Walk, day_prepare, walk_the_day
from tests.evaluation.conftest import numbered_mcq
from tests.factories import PASSWORD, make_frozen_release, make_item, make_judge
from tests.workers import wait_for_workers_ready

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

WALKS = ((390, "en"), (1366, "zh-hans"))


def test_each_role_walks_its_day(
    browser, live_server, taxonomy, make_user, expert, lead, researcher, admin_user, make_endpoint, workers, tmp_path
):
    default_criteria_create(Criterion)  # a data migration's rows, gone after an earlier transactional test's flush
    other_expert = make_user("expert", username="expert2")
    for n in range(6):
        make_item(uid=f"eval-{n}", user=lead, status="accepted", content=numbered_mcq(n))
    make_item(uid="eval-open", kind="open_prompt", dimension="emotion_matching", user=lead, status="accepted")
    release = make_frozen_release(version="0.9.0", title="Day evaluation release", user=lead)
    judges = [
        make_judge(name="Careful day judge", endpoint=make_endpoint("sim-judge-noise2")),
        make_judge(name="Noisy day judge", endpoint=make_endpoint("sim-judge-noise25-bias10")),
    ]
    models = [make_endpoint("sim-mcq-acc90"), make_endpoint("sim-style-template")]
    users = {"expert": expert, "lead": lead, "researcher": researcher, "admin": admin_user}
    days = [
        day_prepare(
            tag=f"{language[:2]}{width}",
            version=f"9.{n}.0",
            expert=expert,
            other_expert=other_expert,
            lead=lead,
            researcher=researcher,
            admin=admin_user,
            judges=judges,
        )
        for n, (width, language) in enumerate(WALKS)
    ]
    workers.start()
    wait_for_workers_ready(workers)

    timings, problems = {}, {}
    for (width, language), data in zip(WALKS, days, strict=True):
        walk = Walk(browser, live_server.url, width, language, PASSWORD)
        try:
            walk_the_day(walk, data, users, models, release)
        finally:
            walk.close()
        timings[f"{width} {language}"] = sorted(walk.timings, reverse=True)
        problems[f"{width} {language}"] = {"wide": walk.wide, "errors": walk.errors, "pages": len(walk.visited)}
    (tmp_path / "day-timings.json").write_text(json.dumps(timings, indent=1))
    for walk_name, rows in timings.items():
        print(f"day {walk_name}: {len(rows)} responses, slowest:", *rows[:5], sep="\n  ")
    for walk_name, found in problems.items():
        assert found["pages"] >= 15, (walk_name, found)  # the walk went through its pages
        assert not found["wide"], (walk_name, found["wide"])
        assert not found["errors"], (walk_name, found["errors"])
