"""A crawler for role audits: every URL pattern of the resolver, filled with real values from the database.

``routes()`` walks the resolver (included apps, namespaces, the DRF routers, the admin site) into one ``Route`` per
URL pattern. ``seed_urls()`` fills each pattern's parameters with values of the objects that fit it: a parameter
named like a model field (``uid``, ``slug``, ``version``, ``code``) takes that field's values; an id takes the ids of
the models named by the parameter or the path segment before it (``runs/<pk>`` -> runs, ``<assignment>`` ->
assignments), of the API view's model, or of the admin page's model; otherwise the ids of every model of the app.
``links()`` reads the redirect, links, form targets and htmx requests of an answer, so a crawl also reaches the
concrete URLs pages use (query strings such as ``?model=M01&language=en``, report file names, the next item).
"""

import html
import itertools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from django.apps import apps
from django.db import models
from django.urls import URLPattern, URLResolver, get_resolver, resolve
from django.urls.exceptions import Resolver404
from django.utils.regex_helper import normalize
from rest_framework.views import APIView

PROJECT_APPS = ("core", "llm", "items", "screening", "releases", "labelling", "calibration", "evaluation")
IDS_PER_MODEL = 4
SEEDS_PER_ROUTE = 6
FALLBACK = {"int": "1", "str": "x"}


@dataclass(frozen=True)
class Route:
    """One URL pattern: its full name (``namespace:name``, or "" when unnamed), its route string as ``resolve``
    reports it, its regex from the root, and its view."""

    name: str
    route: str
    regex: str
    callback: object

    @property
    def key(self) -> str:
        """Name a route for people: its name and route string (some patterns have no name)."""
        return f"{self.name or '(unnamed)'} {self.route}"

    @property
    def namespace(self) -> str:
        return self.name.rpartition(":")[0]

    @property
    def is_api(self) -> bool:
        view_class = getattr(self.callback, "cls", None)
        return isinstance(view_class, type) and issubclass(view_class, APIView)

    @property
    def params(self) -> list[str]:
        return list(re.compile(self.regex).groupindex)

    def is_numeric(self, param: str) -> bool:
        group = re.search(rf"\(\?P<{param}>([^)]*)\)", self.regex).group(1)
        return group in ("[0-9]+", r"\d+") or (self.is_api and param == "pk")

    def app_models(self) -> list[type[models.Model]]:
        """Return the models this route's ids may belong to: the API view's model, else its app's models."""
        view_class = getattr(self.callback, "cls", None)
        queryset = getattr(view_class, "queryset", None)
        if queryset is not None:
            return [queryset.model]
        serializer = getattr(view_class, "serializer_class", None)
        model = getattr(getattr(serializer, "Meta", None), "model", None)
        if model is not None:
            return [model]
        label = self.namespace or getattr(self.callback, "__module__", "").split(".")[0]
        return list(apps.get_app_config(label).get_models()) if label in PROJECT_APPS else []


def routes() -> list[Route]:
    """Return every URL pattern of the project, included ones too, in resolution order."""

    def walk(patterns: list, prefix: str, route: str, namespace: str) -> Iterator[Route]:
        for pattern in patterns:
            regex = pattern.pattern.regex.pattern
            joined = prefix + (regex[1:] if prefix and regex.startswith("^") else regex)
            joined_route = route + (str(pattern.pattern).removeprefix("^") if route else str(pattern.pattern))
            if isinstance(pattern, URLResolver):
                inner = f"{namespace}:{pattern.namespace}" if namespace and pattern.namespace else pattern.namespace
                yield from walk(pattern.url_patterns, joined, joined_route, inner or namespace)
            elif isinstance(pattern, URLPattern):
                name = f"{namespace}:{pattern.name}" if namespace and pattern.name else pattern.name or ""
                yield Route(name=name, route=joined_route, regex=joined, callback=pattern.callback)

    return list(walk(get_resolver().url_patterns, "", "", ""))


def route_table(all_routes: list[Route]) -> dict[str, Route]:
    """Index routes by their route string, as ``resolve`` reports it; the first pattern wins, as in resolving."""
    table = {}
    for route in all_routes:
        table.setdefault(route.route, route)
    return table


def route_of(path: str, table: dict[str, Route]) -> Route | None:
    """Return the route a path resolves to, or None outside the project's patterns."""
    try:
        return table.get(resolve(urlsplit(path).path).route)
    except Resolver404:
        return None


def _ids(model: type[models.Model]) -> list[str]:
    pks = list(model._default_manager.order_by("pk").values_list("pk", flat=True))
    half = IDS_PER_MODEL // 2
    chosen = pks if len(pks) <= IDS_PER_MODEL else pks[:half] + pks[-half:]
    return [str(pk) for pk in chosen]


def _singular(word: str) -> str:
    return word[:-1] if word.endswith("s") else word


def _fitting(candidates: list[type[models.Model]], hint: str) -> list[type[models.Model]]:
    hint = _singular(hint.replace("_", "").replace("-", "").lower())
    exact = [m for m in candidates if m._meta.model_name == hint]
    return exact or [m for m in candidates if hint and hint in m._meta.model_name]


def _admin_model(route: Route) -> type[models.Model] | None:
    for model in apps.get_models():
        prefix = f"admin:{model._meta.app_label}_{model._meta.model_name}_"
        if route.name.startswith(prefix):
            return model
    return None


def _field_values(field: str, candidates: list[type[models.Model]]) -> list[str]:
    everywhere = [m for label in PROJECT_APPS for m in apps.get_app_config(label).get_models()]
    for pool in (candidates, everywhere):
        values = []
        for model in pool:
            if any(f.name == field and f.concrete for f in model._meta.get_fields()):
                values += [str(v) for v in model._default_manager.values_list(field, flat=True).distinct()[:4]]
        if values:
            return list(dict.fromkeys(values))
    return []


def param_values(route: Route, param: str) -> list[str]:
    """Return the values worth trying for one parameter of a route (see the module docstring)."""
    if param == "app_label":
        return [config.label for config in apps.get_app_configs()]
    candidates = route.app_models()
    admin_model = _admin_model(route)
    if admin_model is not None and param == "object_id":
        return _ids(admin_model)
    if param == "content_type_id":
        return ["1"]
    values = _field_values(param, candidates) if param not in ("pk", "id") else []
    if values:
        return values
    if not route.is_numeric(param):
        return []
    before = route.regex.split(f"(?P<{param}>")[0].rstrip("/").rsplit("/", 1)[-1]
    hint = before if param in ("pk", "id") else param
    fitting = _fitting(candidates, hint) or (candidates if param in ("pk", "id") else [])
    ids = [pk for model in fitting for pk in _ids(model)]
    return list(dict.fromkeys(ids))


def seed_urls(route: Route, table: dict[str, Route]) -> list[str]:
    """Return up to ``SEEDS_PER_ROUTE`` URLs of a route, each resolving back to it."""
    options = []
    for param in route.params:
        options.append(param_values(route, param) or [FALLBACK["int" if route.is_numeric(param) else "str"]])
    urls = []
    for fmt, names in normalize(route.regex):
        for combination in itertools.product(*options):
            kwargs = dict(zip(route.params, combination, strict=True))
            if set(names) != set(kwargs):
                continue
            url = "/" + fmt % kwargs
            if route_of(url, table) == route and url not in urls:
                urls.append(url)
            if len(urls) >= SEEDS_PER_ROUTE:
                return urls
    return urls


LINK = re.compile(r"""(?<![\w-])(href|action|hx-get|hx-post)\s*=\s*(["'])(.*?)\2""", re.S)
API_URL = re.compile(r"https?://testserver(/[^\"\s]*)")


@dataclass(frozen=True)
class Link:
    """A URL an answer points to; ``htmx`` when htmx loads it (and sends ``HX-Request``)."""

    url: str
    htmx: bool = False


def links(page_url: str, response: object) -> list[Link]:
    """Return the same-site URLs an answer redirects to, links to, posts forms to or has htmx load."""
    found = []
    location = response.get("Location")
    if location:
        found.append(Link(urljoin(page_url, location)))
    if not is_text(response):
        return _same_site(found)
    body = response.content.decode("utf-8", "replace")
    if response.get("Content-Type", "").startswith("text/html"):
        for attribute, _quote, value in LINK.findall(body):
            found.append(Link(urljoin(page_url, html.unescape(value)), htmx=attribute == "hx-get"))
    elif response.get("Content-Type", "").startswith("application/json"):
        found += [Link(urljoin(page_url, path)) for path in API_URL.findall(body)]
    return _same_site(found)


def _same_site(found: list[Link]) -> list[Link]:
    result = []
    for link in found:
        parts = urlsplit(link.url)
        if parts.netloc not in ("", "testserver") or parts.scheme not in ("", "http", "https"):
            continue
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        if path.startswith("/static/") or not path.startswith("/"):
            continue
        result.append(Link(path, htmx=link.htmx))
    return list(dict.fromkeys(result))


def is_text(response: object) -> bool:
    """Return whether an answer is text a page or API shows (HTML, JSON, plain text), not an image or archive."""
    content_type = response.get("Content-Type", "")
    return content_type.startswith(("text/", "application/json")) and hasattr(response, "content")


def json_detail(response: object) -> str:
    """Return the ``detail`` of a JSON answer, or "" when it is not JSON with a detail."""
    if not response.get("Content-Type", "").startswith("application/json"):
        return ""
    try:
        return str(json.loads(response.content).get("detail", ""))
    except (ValueError, AttributeError):
        return ""
