"""Litmus-test generation from cycles of relations, diy7-style (`pisa-mm gen`)."""
