"""The import rules of docs/architecture.md, checked on the source: every `import` and
`from ... import` in fhec (at module level or inside functions) goes one way between
layers. A change that breaks a rule fails here, naming the file, line and rule."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import fhec.errors

ROOT = Path(fhec.errors.__file__).parent

LAYERS: dict[str, set[str]] = {
    "errors": set(),
    "validate": {"errors"},
    "ring": {"errors", "validate"},
    "schemes": {"errors", "validate", "ring"},
    "ir": {"errors", "validate", "ring", "schemes"},
    "frontend": {"errors", "validate", "ring", "schemes", "ir"},
    "backends": {"errors", "validate", "ir"},
    "analysis": {"errors", "validate", "ring", "schemes", "ir", "backends"},
    "passes": {"errors", "validate", "ring", "schemes", "ir", "backends", "analysis"},
    "sim": {"errors", "validate", "ring", "schemes", "ir", "backends", "analysis", "plot"},
    "isa": {"errors", "validate", "ring", "ir", "backends"},
    "plot": {"errors", "validate", "ir", "backends", "analysis"},
}
"""Layer -> the layers it may import (besides itself). Modules at the top of the package
(the pipeline, the drivers, the CLI, `fhec.testing`) may import anything; no layer
imports them, except `_jit` (the compile notice), which imports nothing of fhec.
`validate` (the shared argument checks) sits beside `errors`: every layer may use it."""

LEAVES = {"_jit"}


def layer_of(module: str) -> str | None:
    """'fhec.passes.lower' -> 'passes'; top-level modules -> None."""
    parts = module.split(".")
    if parts[0] != "fhec" or len(parts) < 2:
        return None
    head = parts[1]
    return head if head in LAYERS else None


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every fhec import in a file, wherever it stands."""
    package = "fhec." + ".".join(path.relative_to(ROOT).with_suffix("").parts)
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.startswith("fhec")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the importing module's package
                base = package.split(".")[: -node.level]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            if name.startswith("fhec"):
                out.append((node.lineno, name))
    return out


def violations() -> list[str]:
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        here = layer_of("fhec." + ".".join(rel.with_suffix("").parts))
        for line, target in imports(path):
            there = layer_of(target)
            name = target.split(".")[1] if target.count(".") else ""
            if name in LEAVES or target == "fhec":
                if target == "fhec" and here is not None:
                    found.append(f"{rel}:{line}: the {here} layer imports the fhec package itself")
                continue
            if here is None:
                continue  # top level: may import anything
            if there is None:
                found.append(f"{rel}:{line}: the {here} layer imports top-level module {target}")
            elif there != here and there not in LAYERS[here]:
                found.append(f"{rel}:{line}: the {here} layer may not import {there} ({target})")
    return found


def test_imports_follow_the_layer_rules():
    assert violations() == []


def test_the_checker_sees_a_violation(tmp_path, monkeypatch):
    """The walker itself works: a sim module importing passes is reported."""
    fake = tmp_path / "fhec"
    (fake / "sim").mkdir(parents=True)
    (fake / "sim" / "bad.py").write_text("def f():\n    from fhec.passes.offchip import schedule_offchip\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", fake)
    assert violations() == ["sim/bad.py:2: the sim layer may not import passes (fhec.passes.offchip)"]


def test_no_cycle_between_sim_and_passes():
    for layer, other in (("sim", "passes"), ("passes", "sim"), ("analysis", "passes"), ("analysis", "sim"),
                         ("isa", "passes"), ("isa", "sim"), ("passes", "isa"), ("sim", "isa")):
        assert other not in LAYERS[layer]
