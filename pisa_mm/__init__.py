"""pisa-mm: a memory-model checker for Intel's Portable ISA (PISA)."""

__version__ = "0.1.0"
