"""The layout rules of docs/development.md, checked on the source: dependency direction, module size, names."""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Lower layers never import higher ones; apps on one layer do not import each other. The annotation stream's apps
# live in the ``annotation`` package, so the top level reads as the pipeline: core -> llm -> annotation -> calibration
# -> evaluation. ``annotation.queue`` (the work queue screening and labelling share) is a package, not an app, and
# sits right above ``core``: it may import only ``core`` and Django.
LAYERS = [
    "core",
    "annotation.queue",
    "llm",
    "annotation.items",
    "annotation.screening",
    "annotation.releases",
    "annotation.labelling",
    "calibration",
    "evaluation",
    "demo",
]
RANK = {app: n for n, app in enumerate(LAYERS)}
# Layers that are packages of shared code, not Django apps: they have no ``apps.py``, models or tables of their own.
PACKAGES = {"annotation.queue"}
TOP_LEVEL = ["core", "llm", "annotation", "calibration", "evaluation", "demo"]
MAX_LINES = 600
CONVENTIONAL = {"models", "views", "api", "services", "selectors", "forms", "urls", "admin", "serializers", "tasks"}


def app_modules(app: str) -> list[Path]:
    return sorted(p for p in (ROOT / app.replace(".", "/")).rglob("*.py") if "migrations" not in p.parts)


def app_of(module: str) -> str:
    """Return the app (a layer) that holds the dotted ``module``, or its top-level package if it is in none."""
    for app in sorted(LAYERS, key=len, reverse=True):
        if module == app or module.startswith(app + "."):
            return app
    return module.split(".")[0]


def imported_apps(path: Path) -> set[tuple[str, int]]:
    """Return (app, line) for every import in ``path``, including imports inside functions."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {(app_of(alias.name), node.lineno) for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "annotation":  # ``from annotation import labelling`` imports the app it names
                found |= {(app_of(f"annotation.{alias.name}"), node.lineno) for alias in node.names}
            else:
                found.add((app_of(node.module), node.lineno))
    return found


def test_every_app_is_on_a_layer():
    apps = {".".join(p.parent.relative_to(ROOT).parts) for p in ROOT.rglob("apps.py") if ".venv" not in p.parts}
    assert apps == set(LAYERS) - PACKAGES


def test_every_package_of_the_annotation_stream_is_an_app_or_a_shared_package_on_a_layer():
    packages = {f"annotation.{p.parent.name}" for p in (ROOT / "annotation").glob("*/__init__.py")}
    assert packages == {layer for layer in LAYERS if layer.startswith("annotation.")}
    assert not any((ROOT / package.replace(".", "/") / "apps.py").exists() for package in PACKAGES)


def test_the_top_level_reads_as_the_pipeline():
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"config", "tests", "scripts"}
    assert packages == set(TOP_LEVEL)


@pytest.mark.parametrize("app", LAYERS)
def test_imports_point_down_the_layers_only(app):
    wrong = [
        f"{path.relative_to(ROOT)}:{line} imports {target}"
        for path in app_modules(app)
        for target, line in imported_apps(path)
        if target in RANK and target != app and RANK[target] >= RANK[app]
    ]
    assert not wrong, "imports against the dependency direction:\n" + "\n".join(sorted(wrong))


def test_no_module_outside_migrations_and_tests_is_longer_than_the_limit():
    long = []
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT).parts
        if parts[0] in {".venv", "tests"} or "migrations" in parts or any(p.startswith(".") for p in parts):
            continue
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > MAX_LINES:
            long.append(f"{path.relative_to(ROOT)}: {n} lines")
    assert not long, f"modules over {MAX_LINES} lines:\n" + "\n".join(long)


def test_no_module_name_carries_a_conventional_module_as_a_suffix():
    prefixed = [
        str(path.relative_to(ROOT))
        for app in LAYERS
        for path in app_modules(app)
        # Command modules are named by the command users type (``rank_models``), not by a concept.
        if "_" in path.stem and path.stem.rsplit("_", 1)[1] in CONVENTIONAL and "commands" not in path.parts
    ]
    assert not prefixed, "name the concept with a package instead: " + ", ".join(prefixed)


def test_the_checker_sees_imports_inside_functions(tmp_path):
    source = tmp_path / "mod.py"
    source.write_text(
        "def f():\n    from evaluation import services\n    import calibration.models\n"
        "    from annotation.items.models import Item\n    from annotation import labelling\n"
    )
    assert imported_apps(source) == {
        ("evaluation", 2),
        ("calibration", 3),
        ("annotation.items", 4),
        ("annotation.labelling", 5),
    }


def test_screening_and_labelling_share_the_work_queue_and_do_not_import_each_other():
    imports = {
        app: {target for path in app_modules(app) for target, _line in imported_apps(path)}
        for app in ("annotation.screening", "annotation.labelling")
    }
    assert all("annotation.queue" in targets for targets in imports.values())
    assert "annotation.labelling" not in imports["annotation.screening"]
    assert "annotation.screening" not in imports["annotation.labelling"]


# Templates follow the layers too. ``templates/<app>/`` belongs to <app> (named by its label) and links, with
# ``{% url 'namespace:name' %}``, only to its own app and the apps below it: a page of a lower app reaches a higher one
# through a registry (``core.home``), as its code would. Un-namespaced names (home, login, the API docs) and the
# admin site's are config's and core's, below every app. The site's frame, ``core/templates/`` (the base layout with
# the navigation to every app, the error pages), is exempt: like ``config/urls.py`` it is the map of the whole site.
TEMPLATES = ROOT / "templates"
URL_TAG = re.compile(r"""\{%\s*url\s+(['"])(?:(?P<namespace>[\w-]+):)?[\w-]+\1""")
LABELS = {app.rsplit(".", 1)[-1]: app for app in LAYERS}
CORE_NAMESPACES = {None, "admin"}


def linked_apps(path: Path) -> set[tuple[str, int]]:
    """Return (app, line) for every ``{% url %}`` tag in the template at ``path``, naming the app of its namespace."""
    found = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        for match in URL_TAG.finditer(line):
            namespace = match.group("namespace")
            found.add(("core" if namespace in CORE_NAMESPACES else LABELS.get(namespace, namespace), number))
    return found


def test_every_template_folder_belongs_to_an_app_or_a_third_party_package():
    assert {p.name for p in TEMPLATES.iterdir() if p.is_dir()} - set(LABELS) == {"drf_spectacular"}


@pytest.mark.parametrize("label", sorted(set(LABELS) & {p.name for p in TEMPLATES.iterdir()}))
def test_templates_link_down_the_layers_only(label):
    app = LABELS[label]
    wrong = [
        f"{path.relative_to(ROOT)}:{line} links to {target}"
        for path in sorted((TEMPLATES / label).rglob("*.html"))
        for target, line in linked_apps(path)
        if target not in RANK or RANK[target] > RANK[app]
    ]
    assert not wrong, "links against the dependency direction:\n" + "\n".join(sorted(wrong))


def test_the_link_checker_reads_namespaces_quotes_and_plain_names(tmp_path):
    page = tmp_path / "page.html"
    page.write_text(
        """<a href="{% url 'evaluation:run' run.pk %}">\n{% url "llm:run-detail" 1 %} {% url 'home' %}\n"""
        """{% url 'admin:index' %}{%url 'labelling:set-list'%}\n"""
    )
    assert linked_apps(page) == {("evaluation", 1), ("llm", 2), ("core", 2), ("core", 3), ("annotation.labelling", 3)}
