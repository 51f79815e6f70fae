"""The text progress bar shared by the run commands."""

import sys
import time

from django.core.management.base import CommandError, OutputWrapper
from django.utils.translation import gettext as _

from llm import selectors
from llm.models import Endpoint, Run


def bar(progress: dict, width: int = 30) -> str:
    """Return a one-line progress bar: ``[#####.....]  48.0%  960/2000 done (120 cached, 3 failed) ...``."""
    planned = progress["planned"] or 1
    filled = int(width * (progress["done"] + progress["failed"]) / planned)
    text = _("%(done)s/%(planned)s done (%(cached)s from cache, %(failed)s failed), spent %(spent)s of ~%(total)s") % {
        "done": progress["done"],
        "planned": progress["planned"],
        "cached": progress["cached"],
        "failed": progress["failed"],
        "spent": f"{progress['spent']:.4f}",
        "total": f"{progress['estimated_total']:.4f}",
    }
    line = f"[{'#' * filled}{'.' * (width - filled)}] {progress['percent']:5.1f}%  {text}  {progress['status']}"
    if progress.get("eta_seconds") is not None:
        line += "  " + _("about %(s)s s left") % {"s": progress["eta_seconds"]}
    if progress["stalled"]:
        line += "  " + _("(stalled: is a worker running?)")
    return line


def describe(run: Run) -> str:
    simulator = " · " + _("Simulator") if run.endpoint.is_simulator else ""
    mode = " · " + _("provider batches") if run.is_batch else ""
    return f"#{run.pk} {run.name} · {run.endpoint.name}{simulator} · {run.endpoint.model} · {run.parser}{mode}"


def follow(run: Run, stdout: OutputWrapper, *, interval: float, once: bool = False) -> Run:
    """Print the progress of a run until it stops (redrawing one line on a terminal); return the final run."""
    tty = stdout.isatty()
    stdout.write(describe(run))
    while True:
        run = selectors.run_detail(pk=run.pk)
        line = bar(selectors.run_progress(run=run))
        if tty:
            stdout.write("\r" + line, ending="")
            stdout.flush()
        else:
            stdout.write(line)
        if once or run.status not in Run.ACTIVE:
            break
        time.sleep(interval)
    if tty:
        stdout.write("")
    if run.error:
        stdout.write(_("Error: %(error)s") % {"error": run.error})
    if run.status == Run.Status.PAUSED and run.pause_reason == Run.PauseReason.BUDGET:
        stdout.write(
            _("Paused because of the budget (%(spent)s of %(budget)s spent); raise it to resume.")
            % {"spent": f"{run.spent:.4f}", "budget": f"{run.budget:.4f}"}
        )
    return run


def endpoint_by_name_or_id(value: str) -> Endpoint:
    endpoint = Endpoint.objects.filter(name=value).first()
    if endpoint is None and value.isdigit():
        endpoint = Endpoint.objects.filter(pk=int(value)).first()
    if endpoint is None:
        names = ", ".join(Endpoint.objects.values_list("name", flat=True)[:20])
        raise CommandError(_("No endpoint named %(value)s. Known: %(names)s") % {"value": value, "names": names})
    return endpoint


def run_by_id(value: int) -> Run:
    try:
        return selectors.run_detail(pk=value)
    except Run.DoesNotExist as exc:
        raise CommandError(_("No run with id %(id)s.") % {"id": value}) from exc


def exit_for(run: Run) -> None:
    if run.status in (Run.Status.FAILED, Run.Status.CANCELLED):
        sys.stdout.flush()
        raise CommandError(_("Run %(id)s is %(status)s.") % {"id": run.pk, "status": run.get_status_display()})
