"""The Python package's layers: every storlab module imports the others at
its top (none inside a function to dodge a circle), and no two modules
import each other, directly or round a longer circle. The CLI's verbs
importing `app` from their own package (typer's registration) is the one
edge back up that the layering allows."""

from __future__ import annotations

import ast
from pathlib import Path

import storlab

PACKAGE = Path(storlab.__file__).resolve().parent
# Third-party modules loaded only where used: Ray for --ray, Playwright for
# report --png (heavy, and optional for every other verb).
LAZY = {"ray", "playwright"}


def modules() -> dict[str, ast.Module]:
    out = {}
    for f in sorted(PACKAGE.rglob("*.py")):
        rel = f.relative_to(PACKAGE.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = ast.parse(f.read_text(encoding="utf-8"), str(f))
    return out


def imported(name: str, node: ast.Import | ast.ImportFrom, known: set[str]) -> list[str]:
    """The storlab modules an import statement of module `name` loads."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name in known]
    base = node.module or ""
    if node.level:
        pkg = name.split(".")[: -node.level] if not name.endswith("__init__") else name.split(".")
        base = ".".join([*pkg, base] if base else pkg)
    out = []
    for a in node.names:
        sub = f"{base}.{a.name}"
        out.append(sub if sub in known else base)
    return [m for m in out if m in known]


def test_no_module_imports_inside_a_function():
    found = []
    for name, tree in modules().items():
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or "."]
                    if not all(m.split(".")[0] in LAZY for m in mods):
                        found.append(f"{name}:{node.lineno} {ast.unparse(node)}")
    assert not found, "imports inside functions: " + "; ".join(found)


def test_the_package_has_no_import_circle():
    mods = modules()
    known = set(mods)
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for name, tree in mods.items():
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for m in imported(name, node, known):
                    # A verb registering on its package's app, and a module
                    # importing its own package's __init__, are not a circle.
                    if m != name and not name.startswith(m + "."):
                        edges[name].add(m)
    found = circle(edges)
    assert found is None, "import circle: " + " → ".join(found or [])


def circle(edges: dict[str, set[str]]) -> list[str] | None:
    """The first circle a depth-first search meets, as a path back to its
    start; None without one."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for n in sorted(edges.get(m, ())):
            if state.get(n) == 1:
                return path[path.index(n):] + [n]
            if n not in state and (c := visit(n)):
                return c
        state[m] = 2
        path.pop()
        return None

    for m in sorted(edges):
        if m not in state and (c := visit(m)):
            return c
    return None


def test_the_circle_check_finds_a_circle():
    # The check itself: a → b → c → a is found from a; a → b, b → c is no circle.
    a, b = ast.parse("from storlab.b import x").body[0], ast.parse("import storlab.c").body[0]
    known = {"storlab.a", "storlab.b", "storlab.c"}
    assert imported("storlab.a", a, known) == ["storlab.b"] and imported("storlab.b", b, known) == ["storlab.c"]
    assert circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert circle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
