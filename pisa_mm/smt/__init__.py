"""The Z3 engine: cat models and candidate executions as SMT (the only package importing z3)."""
