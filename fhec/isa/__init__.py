"""ISA backends for programmable targets (issue 13): machine code instead of streams.

After ``lower``, an ISA machine (`fhec.backends.machine.IsaMachine`) is compiled by the
backend its ``isa`` key names (`backend.BACKENDS`), in four passes (`fhec.pipeline.ISA_TAIL`):
instruction selection, register allocation (`regalloc`, Belady spills), scheduling under
the machine's timing model, and encoding. Shared pieces: `backend` (the `IsaBackend`
interface and registry), `code` (instructions and pass results), `regalloc`, `report`.
One package per ISA: `rpu` (B512, docs/isa.md). Import the submodule you need.
"""
