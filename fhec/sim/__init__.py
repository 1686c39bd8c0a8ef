"""Models that run compiled programs: `fhec.sim.functional` executes limb programs
(and, later, emitted streams) on real data; the timing, traffic and energy model
reads the same instruction streams. Import the submodule you need.
"""
