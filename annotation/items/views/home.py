"""The home page, "My work": what is waiting for the signed-in user, by role, and the state of the bank."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from annotation.items import selectors
from core import home


def home_page(request: HttpRequest) -> HttpResponse:
    """Show the user's queues, feedback on their items and runs, as their roles allow, then the bank's counts."""
    context = {**selectors.bank_summary(), "panels": home.home_panels(user=request.user)}
    return render(request, "items/home.html", context)
