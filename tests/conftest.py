"""Test-wide settings: Hypothesis runs derandomized, so CI sees the same examples every time,
and pisa-mm's cache is one of the session's own."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

from hypothesis import settings

# The tests run thousands of generated models and tests, and every process they start
# caches what it compiled: in the user's cache, that evicted the user's own entries (the
# code table keeps 2 MB) and left hundreds of model pickles behind. Set before any test
# module imports pisa_mm; subprocesses inherit it. A test that needs a cache of its own
# still sets one (monkeypatch, fresh_process).
_CACHE = tempfile.mkdtemp(prefix="pisa-mm-tests-")
os.environ["XDG_CACHE_HOME"] = _CACHE
atexit.register(shutil.rmtree, _CACHE, ignore_errors=True)

# Random generation with a fixed seed per test: reproducible failures and a stable CI time.
# `HYPOTHESIS_PROFILE=explore` draws fresh examples (and keeps a local example database).
settings.register_profile("repeatable", derandomize=True, database=None, deadline=None)
settings.register_profile("explore", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))
