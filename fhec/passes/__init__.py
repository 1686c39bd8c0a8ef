"""Transformations of fhec's IRs, each a named pure function ``ir -> ir`` whose
docstring states what it preserves. `fhec.pipeline` lists them in order; import the
submodule you need:

HE level (`fhec.ir.he`): `he_expand`, `he_cleanup` (CSE, DCE), `he_rotations`,
`he_order` (F1 §4.2 hint reuse), `keyswitch_choice`, `he_keyswitch`.
Limb level: `lower` (+ `lower_ops`, `lower_outputs`).
Schedules: `offchip` (F1 §4.3), `cycle` (F1 §4.4).
"""
