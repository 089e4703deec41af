"""Subcommands of the `pisa-mm` command line, one module each."""
