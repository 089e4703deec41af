"""Test-wide settings: Hypothesis runs derandomized, so CI sees the same examples every time."""

from __future__ import annotations

import os

from hypothesis import settings

# Random generation with a fixed seed per test: reproducible failures and a stable CI time.
# `HYPOTHESIS_PROFILE=explore` draws fresh examples (and keeps a local example database).
settings.register_profile("repeatable", derandomize=True, database=None, deadline=None)
settings.register_profile("explore", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))
