"""smt package."""
