"""Measurements of a program that schedule nothing (ARCHITECTURE: the analysis layer).

* `fhec.analysis.stats`   — instruction counts per limb op and per HE op, bytes per class;
* `fhec.analysis.counts`  — closed-form instruction counts of one key switch;
* `fhec.analysis.traffic` — compulsory off-chip traffic, and the classification of a data
  schedule's loads and stores (F1 Fig. 9a);
* `fhec.analysis.bounds`  — lower bounds on cycles: compute, bandwidth, the
  dependency (critical-path) bound and the load-aware bound (its numba kernels are in
  `fhec.analysis._load_tails`, the critical path's in `fhec.analysis._critical_path`).

The schedulers and the timing report read these; this package imports no scheduler and
nothing from `fhec.passes` or `fhec.sim`, so "cycles / bound" compares a schedule with
a number computed independently of it. Import the submodule you need.
"""
