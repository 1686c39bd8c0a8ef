"""Shared pytest configuration: hypothesis profiles.

`ci` (the default) keeps `make test` within CI's budget and is derandomized, so the same
examples run every time (a landing never hinges on a lucky draw); `thorough` draws fresh
random examples, 200 per property, for a deep run:
    HYPOTHESIS_PROFILE=thorough make test
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
