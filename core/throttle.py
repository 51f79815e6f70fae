"""The sign-in throttle: django-axes records failed sign-ins in the database; this module sets the policy.

django-axes (``axes`` in ``INSTALLED_APPS``, its middleware and ``AxesStandaloneBackend``) sees every
``authenticate()`` call, so the sign-in page, the admin's sign-in form and ``POST /api/token/`` share one counter,
kept in its ``AccessAttempt`` table, so every server process sees it. Settings point axes here for:

- the username (``AXES_USERNAME_CALLABLE``): NFKC-normalised as Django reads it, then case-folded, so "ｅxpert" and
  "Expert" count as "expert";
- the client address (``AXES_CLIENT_IP_CALLABLE``): ``REMOTE_ADDR``, or behind ``TRUSTED_PROXY_COUNT`` proxies the
  address the outermost one appended to ``X-Forwarded-For``;
- the policy (``AXES_HANDLER``), per username and address: ``AXES_FAILURE_LIMIT`` failures cost nothing, the one
  that reaches it means waiting ``AXES_COOLOFF_TIME``, and each failure after a wait doubles the next one, up to
  ``LOGIN_LOCKOUT_MAX_SECONDS``; failures are forgotten once a wait is over and as long again has passed quietly.
  Per address, whatever the usernames: ``LOGIN_MAX_FAILURES_PER_ADDRESS`` failures within ``AXES_COOLOFF_TIME``;
- the answer to a locked-out request (``AXES_LOCKOUT_CALLABLE``): 429, saying how long to wait.

See docs/security.md for why.
"""

import ipaddress
import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from axes.handlers.database import AxesDatabaseHandler
from axes.handlers.proxy import AxesProxyHandler
from axes.helpers import get_client_username, get_cool_off, get_credentials, get_failure_limit
from axes.models import AccessAttempt
from axes.signals import user_locked_out
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.timesince import timeuntil
from django.utils.translation import gettext as _

# Set on a request by a view that told the client how long to wait, so ``lockout_response`` keeps its answer.
WAIT_ATTRIBUTE = "sign_in_wait_seconds"


# --- what axes counts: the username and the client address ------------------------------------------------


def normalised_username(request: HttpRequest | None, credentials: dict | None = None) -> str | None:
    """Return the username of a sign-in attempt as the throttle counts it (``AXES_USERNAME_CALLABLE``).

    Django's sign-in form reads ``ｅxpert`` (full-width e) as ``expert`` (NFKC, as ``normalize_username``), and
    new usernames that differ only in case are refused; so each variant must not bring more guesses.
    """
    model = get_user_model()
    data = credentials if credentials is not None else getattr(request, "data", None) or getattr(request, "POST", {})
    username = data.get(model.USERNAME_FIELD) if hasattr(data, "get") else None
    if username is None:
        return None
    # NFKC again after case folding, which can leave a string that NFKC would still change.
    return model.normalize_username(model.normalize_username(str(username)).casefold())


def client_address(request: HttpRequest) -> str | None:
    """Return the address of the client (``AXES_CLIENT_IP_CALLABLE``; the token endpoint's rate limit too).

    With ``TRUSTED_PROXY_COUNT`` = 0, ``REMOTE_ADDR``: ``X-Forwarded-For`` is written by the client and never read.
    With n proxies, each appends the address it received the request from, so the client is the n-th address from
    the end; earlier entries may be forged. A request with fewer entries (it bypassed the proxies) or a malformed
    entry falls back to ``REMOTE_ADDR``.
    """
    remote = request.META.get("REMOTE_ADDR") or None
    count = settings.TRUSTED_PROXY_COUNT
    if count <= 0:
        return remote
    forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if part.strip()]
    if len(forwarded) < count:
        return remote
    try:
        return str(ipaddress.ip_address(forwarded[-count]))
    except ValueError:
        return remote


# --- the policy ------------------------------------------------------------------------------------------


def lockout_delay(failures: int, *, limit: int, first: timedelta, longest: timedelta) -> timedelta:
    """Return the wait after ``failures`` failures: none below ``limit``, ``first`` at it, then doubling, capped."""
    if failures < limit:
        return timedelta(0)
    doublings = min(failures - limit, 63)  # past the cap anyway; keeps the power small
    return timedelta(seconds=min(first.total_seconds() * 2**doublings, longest.total_seconds()))


@dataclass(frozen=True)
class Policy:
    limit: int  # failures per username and address before the first wait
    first: timedelta  # the first wait, and the quiet period after which failures are forgotten
    longest: timedelta  # the longest wait
    address_limit: int  # failures per address (any usernames) within ``first``

    def delay(self, failures: int) -> timedelta:
        return lockout_delay(failures, limit=self.limit, first=self.first, longest=self.longest)


def policy(request: HttpRequest | None = None, credentials: dict | None = None) -> Policy:
    """Read the policy from the settings (axes' failure limit and cool-off, and ours)."""
    return Policy(
        limit=get_failure_limit(request, credentials),
        first=get_cool_off(request),
        longest=timedelta(seconds=settings.LOGIN_LOCKOUT_MAX_SECONDS),
        address_limit=settings.LOGIN_MAX_FAILURES_PER_ADDRESS,
    )


def _seconds_until(moment: datetime, now: datetime) -> int:
    return max(0, math.ceil((moment - now).total_seconds()))


class SignInThrottleHandler(AxesDatabaseHandler):
    """axes' database handler with progressive waits per username and address, and a limit per address.

    axes keeps one ``AccessAttempt`` per username, address and user agent, with its failure count and the time of
    its last failure; a username and address pair sums its rows, so changing user agents gains nothing.
    """

    def _pair(self, request: HttpRequest, credentials: dict | None) -> QuerySet[AccessAttempt]:
        username = get_client_username(request, credentials)
        return AccessAttempt.objects.filter(username=username, ip_address=request.axes_ip_address)

    def _pair_state(self, request: HttpRequest, credentials: dict | None, now: datetime) -> tuple[int, datetime]:
        """Return the pair's failures (0 once forgotten) and the time of its last one."""
        rows = list(self._pair(request, credentials).values_list("failures_since_start", "attempt_time"))
        if not rows:
            return 0, now
        failures = sum(count for count, _time in rows)
        last = max(time for _count, time in rows)
        rules = policy(request, credentials)
        if now >= last + rules.delay(failures) + rules.first:
            return 0, last
        return failures, last

    def wait_seconds(self, request: HttpRequest, credentials: dict | None = None) -> int:
        """Return how many seconds this username and address must wait before trying again (0: may try now)."""
        now = timezone.now()
        rules = policy(request, credentials)
        failures, last = self._pair_state(request, credentials, now)
        pair_wait = _seconds_until(last + rules.delay(failures), now)

        # Per address: the failures of rows whose last failure is recent; locked until enough of them age out.
        recent = AccessAttempt.objects.filter(ip_address=request.axes_ip_address, attempt_time__gt=now - rules.first)
        rows = sorted(recent.values_list("attempt_time", "failures_since_start"))
        remaining = sum(count for _time, count in rows)
        address_wait = 0
        for time, count in rows:
            if remaining < rules.address_limit:
                break
            remaining -= count
            address_wait = _seconds_until(time + rules.first, now)
        return max(pair_wait, address_wait)

    def is_locked(self, request: HttpRequest, credentials: dict | None = None) -> bool:
        return self.wait_seconds(request, credentials) > 0

    def get_failures(self, request: HttpRequest, credentials: dict | None = None) -> int:
        return self._pair_state(request, credentials, timezone.now())[0]

    def user_login_failed(
        self, sender: object, credentials: dict, request: HttpRequest | None = None, **kwargs: object
    ) -> None:
        """Record the failure (axes), then flag the request as locked out when the address limit was reached."""
        super().user_login_failed(sender, credentials, request, **kwargs)
        if request is None or request.axes_locked_out or not self.is_locked(request, credentials):
            return
        request.axes_locked_out = True
        request.axes_credentials = credentials
        user_locked_out.send(
            "axes",
            request=request,
            username=get_client_username(request, credentials),
            ip_address=request.axes_ip_address,
        )

    def clean_expired_user_attempts(self, request: HttpRequest | None = None, credentials: dict | None = None) -> int:
        """Delete what no rule can count any more, and this pair's failures once forgotten.

        Runs before axes records a failure, so a forgotten pair starts again from zero.
        """
        now = timezone.now()
        rules = policy(request, credentials)
        count, _deleted = AccessAttempt.objects.filter(attempt_time__lte=now - rules.longest - rules.first).delete()
        if request is not None and credentials is not None:
            failures, _last = self._pair_state(request, credentials, now)
            if failures == 0:
                count += self._pair(request, credentials).delete()[0]
        return count

    def reset_user_attempts(self, request: HttpRequest, credentials: dict | None = None) -> int:
        """Forget this username's failures from this address after it signed in (``AXES_RESET_ON_SUCCESS``).

        Only the pair: a sign-in to one account must not clear failures against others from the same address.
        """
        return self._pair(request, credentials).delete()[0]


# --- what a locked-out client is told --------------------------------------------------------------------


def sign_in_wait(request: HttpRequest, username: object) -> int:
    """Return how many seconds ``request``'s client must wait before signing in as ``username`` (0: now)."""
    if not settings.AXES_ENABLED:
        return 0
    AxesProxyHandler.update_request(request)
    handler = AxesProxyHandler.get_implementation()
    credentials = get_credentials(None if username is None else str(username))
    return handler.wait_seconds(request, credentials) if isinstance(handler, SignInThrottleHandler) else 0


def wait_message(seconds: int) -> str:
    """Say that there were too many failures and how long to wait, in whole minutes (hours past the hour)."""
    now = timezone.now()
    minutes = max(1, math.ceil(seconds / 60))
    wait = timeuntil(now + timedelta(minutes=minutes), now)
    return _("Too many failed sign-in attempts. Try again in %(wait)s.") % {"wait": wait}


def mark_throttled(request: HttpRequest, seconds: int) -> None:
    """Note that the view answering ``request`` says how long to wait (see ``lockout_response``)."""
    setattr(request, WAIT_ATTRIBUTE, seconds)


def throttled(response: HttpResponse, seconds: int) -> HttpResponse:
    """Make ``response`` a 429 that says when to try again."""
    response.status_code = 429
    response["Retry-After"] = str(max(1, seconds))
    return response


def lockout_response(
    request: HttpRequest, original_response: HttpResponse | None = None, credentials: dict | None = None
) -> HttpResponse:
    """Answer a request that axes locked out (``AXES_LOCKOUT_CALLABLE``): 429 and how long to wait.

    The sign-in forms say so on the form, so their page is kept; anything else gets JSON under ``/api/`` and the
    site's refusal page elsewhere.
    """
    seconds = getattr(request, WAIT_ATTRIBUTE, None)
    if original_response is not None and seconds:
        return throttled(original_response, seconds)
    seconds = sign_in_wait(request, normalised_username(request, credentials))
    if request.path.startswith("/api/"):
        response = JsonResponse({"detail": wait_message(seconds)}, json_dumps_params={"ensure_ascii": False})
    else:
        response = render(request, "403.html", {"detail": wait_message(seconds)})
    return throttled(response, seconds)
