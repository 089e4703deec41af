"""The command-line runner: per-test jobs, budgets, worker pools, interrupts, ordered output."""
