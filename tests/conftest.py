"""Shared pytest configuration: hypothesis profiles.

`ci` (the default) keeps `make test` within CI's budget and is derandomized, so the same
examples run every time (a landing never hinges on a lucky draw); `thorough` draws fresh
random examples, 200 per property, for a deep run:
    HYPOTHESIS_PROFILE=thorough make test

Hypothesis (>= 6.131) also draws, 5-15% of the time, constants it finds in the source of
every local module in `sys.modules`; that pool grows as tests import modules, so a
derandomized test drew different examples alone than after other tests (a coverage
assertion passed alone and failed in the full suite). Under a derandomized profile the
pool is pinned empty, so an example depends only on the test's seed.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "thorough", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


if settings.default.derandomize:
    from hypothesis.internal.conjecture import providers as _providers
    from hypothesis.internal.constants_ast import Constants as _Constants

    # private API, read by the provider once per example: fail loudly if hypothesis renames it
    assert hasattr(_providers, "_get_local_constants"), "hypothesis moved its local-constants pool"
    _NO_LOCAL_CONSTANTS = _Constants()
    _providers._get_local_constants = lambda: _NO_LOCAL_CONSTANTS
