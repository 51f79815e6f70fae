"""Pages for item templates and LLM drafting jobs."""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import permission_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from items import drafting
from items.models import Dimension, DraftingJob, EmotionCategory, Item, ItemTemplate, Scenario
from llm.models import Endpoint


class TemplateForm(forms.Form):
    dimension = forms.ModelChoiceField(
        label=gettext_lazy("Dimension"), queryset=Dimension.objects.filter(children__isnull=True)
    )
    kind = forms.ChoiceField(label=gettext_lazy("Item kind"), choices=Item.Kind.choices)
    instructions = forms.CharField(label=gettext_lazy("Instructions"), widget=forms.Textarea(attrs={"rows": 5}))
    constraints = forms.CharField(
        label=gettext_lazy("Constraints"), widget=forms.Textarea(attrs={"rows": 3}), required=False
    )
    scenarios = forms.ModelMultipleChoiceField(
        label=gettext_lazy("Target scenarios"), queryset=Scenario.objects.all(), required=False
    )
    emotions = forms.ModelMultipleChoiceField(
        label=gettext_lazy("Target emotions"), queryset=EmotionCategory.objects.all(), required=False
    )
    seed_items = forms.CharField(label=gettext_lazy("Seed items (uids of expert-revised items)"), required=False)

    def clean_seed_items(self) -> list[Item]:
        uids = [u for u in self.cleaned_data.get("seed_items", "").replace(",", " ").split() if u]
        items = list(Item.objects.filter(uid__in=uids))
        missing = sorted(set(uids) - {i.uid for i in items})
        if missing:
            raise forms.ValidationError(_("Unknown items: %(uids)s") % {"uids": ", ".join(missing)})
        return items


class JobForm(forms.Form):
    template = forms.ModelChoiceField(
        label=gettext_lazy("Template"), queryset=ItemTemplate.objects.select_related("dimension")
    )
    endpoint = forms.ModelChoiceField(label=gettext_lazy("Endpoint"), queryset=Endpoint.objects.filter(is_active=True))
    count = forms.IntegerField(label=gettext_lazy("How many candidates"), min_value=1, max_value=1000, initial=10)
    languages = forms.MultipleChoiceField(
        label=gettext_lazy("Languages"),
        choices=[("en", gettext_lazy("English")), ("zh", gettext_lazy("Chinese"))],
        widget=forms.CheckboxSelectMultiple,
        initial=["en"],
    )
    translate = forms.BooleanField(
        label=gettext_lazy("Also draft the other language (marked machine-drafted)"), required=False
    )


@permission_required("items.add_item", raise_exception=True)
def overview(request: HttpRequest) -> HttpResponse:
    template_form = TemplateForm(request.POST if request.POST.get("form") == "template" else None, prefix="t")
    job_form = JobForm(request.POST if request.POST.get("form") == "job" else None, prefix="j")
    if request.method == "POST" and template_form.is_bound and template_form.is_valid():
        data = template_form.cleaned_data
        try:
            template = drafting.item_template_save(user=request.user, **data)
        except ValidationError as exc:
            template_form.add_error(None, exc)
        else:
            messages.success(request, _("Saved %(template)s.") % {"template": template})
            return redirect("items:drafting")
    if request.method == "POST" and job_form.is_bound and job_form.is_valid():
        data = job_form.cleaned_data
        try:
            job = drafting.drafting_job_start(user=request.user, **data)
        except ValidationError as exc:
            job_form.add_error(None, exc)
        else:
            return redirect("items:drafting-job", pk=job.pk)
    return render(
        request,
        "items/drafting.html",
        {
            "templates": ItemTemplate.objects.select_related("dimension", "created_by"),
            "jobs": DraftingJob.objects.select_related("template__dimension", "llm_run")[:20],
            "template_form": template_form,
            "job_form": job_form,
        },
        status=400 if (template_form.errors or job_form.errors) else 200,
    )


@permission_required("items.add_item", raise_exception=True)
def job_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """Show a job; its candidates appear once the drafting collector has taken the finished run's replies."""
    job = get_object_or_404(DraftingJob.objects.select_related("template__dimension", "llm_run", "endpoint"), pk=pk)
    waiting = not job.collected and not (job.llm_run and job.llm_run.collect_error)
    context = {"job": job, "waiting": waiting}
    if request.htmx:
        return render(request, "items/drafting_job.html#status", context)
    return render(request, "items/drafting_job.html", context)
