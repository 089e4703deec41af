"""pisa-mm: a memory-model checker for Intel's Portable ISA (PISA)."""

from pisa_mm import finder

__version__ = "0.1.0"

finder.install()
