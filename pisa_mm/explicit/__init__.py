"""explicit package."""
