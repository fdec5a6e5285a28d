"""Every import of the product's own modules names a module that exists and names defined there, read from
the source (only packages' ``__init__`` run, to find their modules): the imports inside functions (the GPU
paths, which a machine without a GPU never runs) are checked as the top-level ones are."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OWN = ("sim", "viewer", "shaders", "assets")


def sources() -> list[Path]:
    return [
        ROOT / "main.py",
        *sorted((ROOT / "sim").rglob("*.py")),
        *sorted((ROOT / "viewer").rglob("*.py")),
        *sorted((ROOT / "bench").glob("*.py")),
        *sorted((ROOT / "tests").glob("*.py")),
    ]


def module_file(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    return Path(spec.origin) if spec is not None and spec.origin not in (None, "namespace") else None


def defined(path: Path) -> set[str]:
    """Names a module defines at its top level (functions, classes, assignments, imports)."""
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.If, ast.Try)):
            for inner in ast.walk(node):
                if isinstance(inner, (ast.FunctionDef, ast.ClassDef)):
                    names.add(inner.name)
                elif isinstance(inner, (ast.Import, ast.ImportFrom)):
                    names.update((a.asname or a.name).split(".")[0] for a in inner.names)
                elif isinstance(inner, ast.Assign):
                    names.update(n.id for t in inner.targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return names


def problems(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in OWN and importlib.util.find_spec(alias.name) is None:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: no module {alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and node.module.split(".")[0] in OWN:
            if importlib.util.find_spec(node.module) is None:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: no module {node.module}")
                continue
            file = module_file(node.module)
            names = defined(file) if file is not None else set()
            for alias in node.names:
                if alias.name == "*" or alias.name in names:
                    continue
                package = file is not None and file.name == "__init__.py"
                if not package or importlib.util.find_spec(f"{node.module}.{alias.name}") is None:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.module} has no {alias.name}")
    return found


def test_every_own_import_names_a_module_and_names_that_exist():
    found = [p for path in sources() for p in problems(path)]
    assert found == []


def test_the_check_sees_a_wrong_module_and_a_wrong_name():
    planted = ROOT / "tests" / "_planted_imports.py"
    planted.write_text("def f():\n    from sim.cuda import kernels\n    from sim.gpu.cuda import no_such_name\n")
    try:
        assert problems(planted) == [
            "tests/_planted_imports.py:2: no module sim.cuda",
            "tests/_planted_imports.py:3: sim.gpu.cuda has no no_such_name",
        ]
    finally:
        planted.unlink()
