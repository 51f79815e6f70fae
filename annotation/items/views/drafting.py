"""Pages for item templates and LLM drafting jobs."""

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _

from annotation.items import selectors
from annotation.items.forms import JobForm, TemplateForm
from annotation.items.models import DraftingJob
from annotation.items.services import drafting
from core.forms import form_write
from core.permissions import permission_required


def _split_failures(job: DraftingJob) -> tuple[list[dict], list[dict]]:
    """Split a job's failure entries into malformed drafts and exact duplicates that were skipped."""
    failures = job.failures or []
    duplicates = [f for f in failures if f.get("kind") == drafting.DUPLICATE]
    return [f for f in failures if f.get("kind") != drafting.DUPLICATE], duplicates


@permission_required("items.add_item")
def overview(request: HttpRequest) -> HttpResponse:
    template_form = TemplateForm(request.POST if request.POST.get("form") == "template" else None, prefix="t")
    job_form = JobForm(request.POST if request.POST.get("form") == "job" else None, prefix="j", user=request.user)
    template = form_write(template_form, lambda data: drafting.item_template_save(user=request.user, **data))
    if template is not None:
        messages.success(request, _("Saved %(template)s.") % {"template": template})
        return redirect("items:drafting")
    job = form_write(job_form, lambda data: drafting.drafting_job_start(user=request.user, **data))
    if job is not None:
        return redirect("items:drafting-job", pk=job.pk)
    jobs = list(selectors.drafting_job_list()[:20])
    for job in jobs:
        job.malformed, job.duplicates = _split_failures(job)
    # The templates and drafting endpoints are read once each, for the table and for the job form's choices.
    templates = list(selectors.item_template_list())
    endpoints = list(job_form.fields["endpoint"].queryset)
    for name, objects in (("template", templates), ("endpoint", endpoints)):
        field = job_form.fields[name]
        field.choices = [("", field.empty_label), *((obj.pk, field.label_from_instance(obj)) for obj in objects)]
    return render(
        request,
        "items/drafting.html",
        {
            "templates": templates,
            "jobs": jobs,
            "template_form": template_form,
            "job_form": job_form,
            "no_drafting_endpoint": not endpoints,
        },
        status=400 if (template_form.errors or job_form.errors) else 200,
    )


@permission_required("items.add_item")
def job_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """Show a job; its candidates appear once the drafting collector has taken the finished run's replies."""
    job = get_object_or_404(DraftingJob.objects.select_related("template__dimension", "llm_run", "endpoint"), pk=pk)
    waiting = not job.collected and not (job.llm_run and job.llm_run.collect_error)
    malformed, duplicates = _split_failures(job)
    context = {"job": job, "waiting": waiting, "malformed": malformed, "duplicates": duplicates}
    if request.htmx:
        return render(request, "items/drafting_job.html#status", context)
    return render(request, "items/drafting_job.html", context)
