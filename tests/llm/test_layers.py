"""The llm app's three parts import one way: records and services below the worker, the simulator on its own.

- records (models, calls, parsers, the call log, lifecycle, collection, selectors, ...) import neither the worker
  (``llm.worker``), the simulator (``llm.simulator``) nor the modules users act through (services, views, the
  API, forms, serializers, admin);
- the worker imports records only: never services, pages or the simulator;
- the simulator imports only itself and ``llm.parsers`` (the wire format both sides share);
- services and pages import the worker only where a comment above the import says why;
- no import cycle among llm's modules, and a function-level import only where a comment says why.

Imports inside functions count, as in tests/test_architecture.py. Management commands are entry points (the
worker's and the simulator's processes start from them) and may import any part.
"""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
LLM = ROOT / "llm"
FRONT = {"llm.services", "llm.views", "llm.api", "llm.forms", "llm.serializers", "llm.admin", "llm.urls"}


def shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {
    module_name(path): path for path in sorted(LLM.rglob("*.py")) if "migrations" not in path.relative_to(LLM).parts
}


def part_of(module: str) -> str:
    if module.startswith("llm.worker"):
        return "worker"
    if module.startswith("llm.simulator"):
        return "simulator"
    if module.startswith("llm.management"):
        return "command"
    if module in FRONT:
        return "front"
    return "records"


def resolve(name: str) -> str | None:
    """Return the llm module that importing ``name`` loads (a module, or the package holding a name), if any."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(path: Path) -> list[tuple[str, ast.stmt, bool]]:
    """Return (llm module, import statement, whether it is inside a function) for every llm import in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    inside = {
        id(node)
        for function in ast.walk(tree)
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
        for node in ast.walk(function)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            # ``from llm.worker import tasks`` loads the module llm.worker.tasks, ``from llm import x`` a name or one.
            names = [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            module = resolve(name)
            if module is not None:
                found.append((module, node, id(node) in inside))
    return found


def says_why(path: Path, node: ast.stmt) -> bool:
    """Whether the import's line, or the line just above it, carries a comment (a ``noqa`` alone says nothing)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    own = re.sub(r"#\s*noqa(:\s*[A-Z0-9, ]+)?", "", lines[node.lineno - 1])
    return "#" in own or lines[node.lineno - 2].lstrip().startswith("#")


def graph() -> dict[str, set[str]]:
    return {
        module: {target for target, _node, _inside in imports_of(path) if target != module}
        for module, path in MODULES.items()
    }


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Return the strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in edges.get(module, ()):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in edges:
        if module not in index:
            visit(module)
    return found


def wrong_imports(allowed: dict[str, set[str]]) -> list[str]:
    wrong = []
    for module, path in MODULES.items():
        for target, node, _inside in imports_of(path):
            if part_of(target) not in allowed.get(part_of(module), {part_of(target)}):
                wrong.append(f"{shown(path)}:{node.lineno} ({part_of(module)}) imports {target}")
    return sorted(wrong)


def test_records_import_neither_the_worker_nor_the_simulator_nor_services():
    assert not wrong_imports({"records": {"records"}})


def test_the_worker_imports_records_only():
    assert not wrong_imports({"worker": {"worker", "records"}})


def test_the_simulator_imports_only_itself_and_the_shared_wire_format():
    wrong = [
        f"{shown(MODULES[module])} imports {target}"
        for module in MODULES
        if part_of(module) == "simulator"
        for target, _node, _inside in imports_of(MODULES[module])
        if part_of(target) != "simulator" and target != "llm.parsers"
    ]
    assert not wrong


def test_services_and_pages_import_the_worker_only_where_a_comment_says_why():
    unexplained = [
        f"{shown(path)}:{node.lineno} imports {target}"
        for module, path in MODULES.items()
        if part_of(module) == "front"
        for target, node, _inside in imports_of(path)
        if part_of(target) in {"worker", "simulator"} and not says_why(path, node)
    ]
    assert not unexplained


def test_no_import_cycle_among_the_llm_modules():
    assert cycles(graph()) == []


def test_a_function_level_import_in_llm_says_why():
    unexplained = []
    for path in MODULES.values():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.Import | ast.ImportFrom) and not says_why(path, node):
                    unexplained.append(f"{shown(path)}:{node.lineno}")
    assert not unexplained


def test_the_checks_see_cycles_wrong_imports_and_unexplained_function_level_imports(tmp_path, monkeypatch):
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    source = tmp_path / "mod.py"
    source.write_text(
        "def f():\n    from llm.worker import runner  # noqa: F401\n\n\n"
        "def g():\n    # Why.\n    from llm import tasks\n"
    )
    monkeypatch.setitem(MODULES, "llm.fake", source)
    assert [(target, inside) for target, _node, inside in imports_of(source)] == [
        ("llm.worker.runner", True),
        ("llm.tasks", True),
    ]
    assert wrong_imports({"records": {"records"}}) == [f"{source}:2 (records) imports llm.worker.runner"]
    assert [says_why(source, node) for _target, node, _inside in imports_of(source)] == [False, True]
