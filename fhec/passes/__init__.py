"""Transformations of fhec's IRs, each a named pure function ``ir -> ir`` whose
docstring states what it preserves.

HE level (`fhec.ir.he`):

* `he_expand.expand` — high-level ops -> primitives (one evaluator call per node);
* `he_cleanup.cse`, `he_cleanup.dce` — merge duplicates, drop dead nodes;
* `he_rotations.plan_rotations` — fit rotations into a bounded key set;
  `he_rotations.key_requirements` — the keys a program needs.

`prepare_he` is the recipe that turns a traced program into what the evaluator (and
the limb-level lowering) executes.
"""

from fhec.passes.he_cleanup import cse, dce
from fhec.passes.he_expand import expand
from fhec.passes.he_rotations import KeyRequirements, key_requirements, plan_rotations
from fhec.passes.he_rewrite import as_he

HE_PIPELINE = ("expand", "cse", "dce", "plan_rotations")
"""The passes of `prepare_he`, in order."""


def prepare_he(program, max_rotation_keys: int | None = None):
    """expand -> cse -> dce -> plan_rotations (cap: the argument, else the program's
    ``max_rotation_keys`` option). Preserves the outputs' semantics and types."""
    return plan_rotations(dce(cse(expand(as_he(program)))), max_rotation_keys)


__all__ = [
    "expand", "cse", "dce", "plan_rotations", "key_requirements", "KeyRequirements", "prepare_he", "HE_PIPELINE",
]
