"""litmus package."""
