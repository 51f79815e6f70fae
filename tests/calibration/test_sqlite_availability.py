"""On SQLite (`make run`'s database) nothing locks the app: WAL, a busy timeout, and no long write transaction, so a
sign-in succeeds while a calibration report is computed and while the demo studies are built.

These run on the test session's SQLite file with the settings of config.settings (WAL, 30 s busy timeout,
IMMEDIATE transactions), the long work in a thread with its own connection, as a worker process would.
"""

import threading

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client

from annotation.screening.criteria import default_criteria_create
from annotation.screening.models import Criterion
from calibration import services
from tests.factories import PASSWORD, make_calibration_run, run_queued_report_computations

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        settings.DATABASES["default"]["ENGINE"] != "core.backends.sqlite3", reason="SQLite's locking only"
    ),
]


def sign_in(user) -> int:
    """Sign in through the login page as a browser would; return the status code (302 on success)."""
    response = Client().post("/login/", {"username": user.username, "password": PASSWORD})
    assert response.status_code != 302 or response["Location"] == "/", response["Location"]
    return response.status_code


def in_thread(work) -> tuple[threading.Thread, list[BaseException]]:
    errors: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as exc:  # noqa: BLE001 (the test reports it)
            errors.append(exc)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, errors


def test_the_database_runs_in_wal_with_a_busy_timeout_and_immediate_transactions():
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode")
        assert cursor.fetchone()[0] == "wal"
        cursor.execute("PRAGMA busy_timeout")
        assert cursor.fetchone()[0] == 30000
    assert connection.transaction_mode == "IMMEDIATE"


def test_a_sign_in_succeeds_while_a_worker_computes_a_report(labelled_set, make_endpoint, researcher, make_user):
    import calibration.report

    run = make_calibration_run(
        comparison_set=labelled_set,
        judges={"careful": make_endpoint("sim-judge-noise2")},
        user=researcher,
        bootstrap=30,
        report=False,
    )
    user = make_user("expert", username="signs-in")
    computing, go_on = threading.Event(), threading.Event()
    real_build = calibration.report.build_report

    def long_build(run):
        # The statistics take a minute on a real set: the computation stays in progress until the sign-in is done.
        computing.set()
        assert go_on.wait(90), "the sign-in never finished"
        return real_build(run)

    calibration.report.build_report = long_build
    try:
        services.calibration_report_request(run=run)
        worker, errors = in_thread(run_queued_report_computations)
        assert computing.wait(60)
        status = sign_in(user)
    finally:
        go_on.set()
        calibration.report.build_report = real_build
    worker.join(120)

    assert status == 302
    assert not errors
    run.refresh_from_db()
    assert run.report_state == "done"


def test_a_sign_in_succeeds_while_the_demo_studies_are_built(simulator, settings, make_user):
    from demo.base import demo_seed
    from demo.evaluation import demo_studies
    from llm import services as llm_services

    settings.LLM_SIMULATOR_URL = simulator.base_url
    default_criteria_create(Criterion)  # a data migration's rows, gone after an earlier transactional test's flush
    demo_seed()  # `make run` does this before the server starts
    user = make_user("expert", username="signs-in")

    def build() -> None:
        llm_services.simulator_endpoints_register(base_url=simulator.base_url)
        demo_studies()

    builder, errors = in_thread(build)
    statuses, during = [], 0
    while builder.is_alive() or not statuses:
        statuses.append(sign_in(user))
        during += builder.is_alive()
    builder.join()

    assert not errors, errors
    assert set(statuses) == {302}, statuses
    assert during >= 1
    from calibration.models import CalibrationRun
    from evaluation.models import EvaluationRun

    assert CalibrationRun.objects.get(name="Demo calibration").report_state == "done"
    assert EvaluationRun.objects.get(name="Demo evaluation").phase == "done"
