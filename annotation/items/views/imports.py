"""The page of an item import job: where the worker has got, then what it imported or why nothing was."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django_htmx.http import HttpResponseClientRefresh

from annotation.items import selectors
from core.permissions import permission_required


@permission_required("items.add_item")
def import_job(request: HttpRequest, pk: int) -> HttpResponse:
    """Show an import job to its importer (or an admin); while it runs, htmx asks for its state every 2 seconds."""
    job = get_object_or_404(selectors.item_import_jobs(user=request.user), pk=pk)
    if request.htmx and request.GET.get("part") == "state":
        if job.finished:
            # Finished: the whole page changes (counts or errors), so the browser loads it again.
            return HttpResponseClientRefresh()
        return render(request, "items/import_job.html#state", {"job": job})
    return render(request, "items/import_job.html", {"job": job})
