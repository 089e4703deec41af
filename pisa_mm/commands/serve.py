"""`pisa-mm serve`: a local web explorer for litmus tests (Starlette on uvicorn)."""

from __future__ import annotations

import argparse
import ipaddress
import sys
from pathlib import Path

from pisa_mm.errors import PisaMMError
from pisa_mm.runner.budget import Budget, parse_seconds

DEFAULT_PORT = 8765
DEFAULT_TIMEOUT = 30.0
DEFAULT_MEMORY_MIB = 2048


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to listen on (default: 127.0.0.1, this machine only); another "
        "address needs --public",
    )
    parser.add_argument(
        "--public",
        action="store_true",
        help="allow a --host that is not a loopback address (anyone who reaches it may run tests)",
    )
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"the TCP port (default: {DEFAULT_PORT})"
    )
    parser.add_argument(
        "--timeout",
        type=parse_seconds,
        default=DEFAULT_TIMEOUT,
        metavar="S",
        help=f"stop a run after S seconds (default: {DEFAULT_TIMEOUT:g})",
    )
    parser.add_argument(
        "--memory",
        type=int,
        default=DEFAULT_MEMORY_MIB,
        metavar="MIB",
        help=f"stop a run that needs more than MIB MiB (default: {DEFAULT_MEMORY_MIB})",
    )
    parser.add_argument(
        "--suite",
        metavar="DIR",
        help="the litmus tests the page offers (default: the repository's litmus/)",
    )


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def main(args: argparse.Namespace) -> int:
    """Serve until interrupted."""
    if not _loopback(args.host) and not args.public:
        raise PisaMMError.at(
            None, f"--host {args.host} is not a loopback address: the explorer runs "
            "whatever it is sent, so add --public to serve beyond this machine", "usage"
        )  # fmt: skip
    if args.memory < 256 or not 1 <= args.port <= 65535:
        raise PisaMMError.at(
            None, "--memory must be at least 256 MiB, and --port in 1..65535", "usage"
        )  # fmt: skip
    try:
        import uvicorn

        from pisa_mm.web.app import DEFAULT_SUITE, ServeConfig, create_app
    except ModuleNotFoundError as exc:
        raise PisaMMError.at(
            None, f"pisa-mm serve needs the `serve` extra ({exc.name} is missing): "
            "pip install 'pisa-mm[serve]'", "usage"
        ) from None  # fmt: skip
    suite = Path(args.suite) if args.suite else DEFAULT_SUITE
    if args.suite and not suite.is_dir():
        raise PisaMMError.at(None, f"no such directory: {args.suite}", "io")
    config = ServeConfig(suite, Budget(args.timeout, args.memory << 20))
    print(f"pisa-mm explorer on http://{args.host}:{args.port}/ (Ctrl-C stops it)", file=sys.stderr)
    uvicorn.run(create_app(config), host=args.host, port=args.port, log_level="warning")
    return 0
