"""`pisa-mm serve`: the local web explorer (a Starlette app, a bounded worker, the page)."""
