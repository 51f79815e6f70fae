"""Print the layout figures of issue 22 for the application code (not tests, scripts or migrations).

    .venv/bin/python scripts/layout_metrics.py [--json] [--list]

Modules over 400 lines, functions over 60 lines, blocks over cyclomatic complexity 20 and their mean (radon's
``cc``, the figure ``radon cc -a`` prints), and imports inside functions, with how many carry a comment saying why
(on the line itself or above the run of import lines it stands in). ``--list`` names the long functions, complex
blocks and bare imports.
"""

import argparse
import ast
import json
import sys
from pathlib import Path

from radon.complexity import cc_visit

ROOT = Path(__file__).resolve().parent.parent
APPS = ["core", "llm", "annotation", "calibration", "evaluation", "demo", "config"]


def app_sources() -> list[Path]:
    """Return the application's Python modules, migrations left out."""
    return sorted(p for app in APPS for p in (ROOT / app).rglob("*.py") if "migrations" not in p.parts)


def _function_imports(tree: ast.AST) -> list[ast.stmt]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for child in ast.walk(node):
                if isinstance(child, ast.Import | ast.ImportFrom) and child is not node:
                    found.append(child)
    return list({id(n): n for n in found}.values())


def _comment_above(lines: list[str], lineno: int) -> bool:
    """Whether a comment line heads the run of import lines that holds line ``lineno`` (1-based)."""
    n = lineno - 1
    while n > 0 and lines[n - 1].strip().startswith(("import ", "from ")):
        n -= 1
    return n > 0 and lines[n - 1].strip().startswith("#")


def measure() -> dict:
    """Return the figures and the places behind them."""
    long_modules, long_functions, complex_blocks, bare_imports = [], [], [], []
    commented_imports = 0
    complexities = []
    for path in app_sources():
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        name = str(path.relative_to(ROOT))
        if len(lines) > 400:
            long_modules.append(f"{name}: {len(lines)} lines")
        tree = ast.parse(source)
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = node.end_lineno - node.lineno + 1
                if length > 60:
                    long_functions.append(f"{name}:{node.lineno} {node.name} ({length} lines)")
        for node in _function_imports(tree):
            here = lines[node.lineno - 1]
            if "#" in here or _comment_above(lines, node.lineno):
                commented_imports += 1
            else:
                bare_imports.append(f"{name}:{node.lineno} {here.strip()}")
        # cc_visit already lists a class's methods after the class (radon's ``blocks``): each block once.
        for block in cc_visit(source):
            complexities.append(block.complexity)
            if block.complexity > 20:
                complex_blocks.append(f"{name}:{block.lineno} {block.fullname} (complexity {block.complexity})")
    return {
        "modules_over_400_lines": long_modules,
        "functions_over_60_lines": long_functions,
        "blocks_over_complexity_20": complex_blocks,
        "mean_complexity": round(sum(complexities) / len(complexities), 2),
        "blocks": len(complexities),
        "function_level_imports_with_a_reason": commented_imports,
        "function_level_imports_without_one": bare_imports,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures and places as JSON")
    parser.add_argument("--list", action="store_true", help="name the places behind each count")
    args = parser.parse_args()
    figures = measure()
    if args.json:
        json.dump(figures, sys.stdout, indent=2)
        print()
        return
    for key, value in figures.items():
        count = len(value) if isinstance(value, list) else value
        print(f"{key.replace('_', ' ')}: {count}")
        if args.list and isinstance(value, list):
            for place in value:
                print(f"    {place}")


if __name__ == "__main__":
    main()
