"""Decoding and checking a raw litmus test, one module per instruction family or check kind."""
