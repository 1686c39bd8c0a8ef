"""Targets and their instruction-stream emitters.

`fhec.backends.target` loads accelerator descriptions (`Target`) from the TOML files
shipped in ``fhec/backends/targets/`` or from a user path; per-target stream emission
lives in submodules named after the target.
"""

from fhec.backends.target import Target, list_targets, load_target, shipped_target_names

__all__ = ["Target", "list_targets", "load_target", "shipped_target_names"]
