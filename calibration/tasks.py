"""Background tasks of the calibration app: thin wrappers taking ids (run them with ``manage.py db_worker``)."""

from django.tasks import task

from calibration import services


@task()
def report_compute(run_id: int) -> bool:
    """Compute a calibration run's requested report (``calibration.services.calibration_report_work``)."""
    return services.calibration_report_work(run_id=run_id)
