"""values package."""
