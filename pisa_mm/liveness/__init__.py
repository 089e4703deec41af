"""Forward progress: spin loops and whether they can wait forever (docs/progress.md).

The modules are imported one by one (`liveness.check`, `liveness.progress`, ...): `run`
imports the progress models to build its command line, and nothing else of them for a test
without a spin loop.
"""
