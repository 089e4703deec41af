"""outcomes package."""
