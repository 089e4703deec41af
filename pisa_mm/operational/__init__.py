"""operational package."""
