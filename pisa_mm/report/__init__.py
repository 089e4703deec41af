"""report package."""

__all__ = ["DEFAULT_MAX_GRAPHS"]

# `run --graphs` draws at most this many pictures per test unless --max-graphs says otherwise
# (here, not in graphs.py: `run` reads it for its options, and imports graphs.py only to draw)
DEFAULT_MAX_GRAPHS = 16
