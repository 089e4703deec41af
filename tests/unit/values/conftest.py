"""Make the shared Hypothesis strategies (value_strategies.py) importable by these tests."""

from __future__ import annotations

import sys
from pathlib import Path

# pytest runs with --import-mode=importlib, which puts no test folder on sys.path.
_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
