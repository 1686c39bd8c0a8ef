"""Models that run compiled programs, reading the IRs and the target, never the passes:

* `fhec.sim.semantics`  — what every limb op computes (one table for both executors);
* `fhec.sim.functional` — executes a limb program on real residues (`fhec.run`);
* `fhec.sim.streams`    — executes per-unit streams cycle by cycle through the modeled
  scratchpad and memory (`Compiled.run`);
* `fhec.sim.bind`       — binds ciphertexts, keys and plaintexts to a program's loaded rvecs;
* `fhec.sim.check`      — the independent hazard checker of emitted streams;
* `fhec.sim.timing`     — the `Report`: cycles, bounds, utilization, traffic, energy.

Import the submodule you need.
"""
