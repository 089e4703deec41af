"""The names of `typing` that the modules of a run use, without importing `typing` at run time.

`typing` is 16 M instructions of the 300 M of `pisa-mm run MP.litmus` (docs/architecture.md,
"Start-up"), and with `from __future__ import annotations` almost everything the modules take
from it is only read by mypy. mypy sees `typing`'s own names here (the `TYPE_CHECKING` branch);
at run time each is the least that its uses need: `cast` returns its value, `assert_never`
raises, a `TypeVar` is an opaque marker, `Generic[...]` and `Protocol[...]` are plain bases
(a class's type parameters are only read by mypy), `overload` and `dataclass_transform` are
decorators that change nothing, and the annotation-only names exist for the rare annotation
evaluated at run time. `ClassVar` is not here: a record (pisa_mm/records.py, as dataclasses)
knows a ClassVar field by typing's own object, so a module that annotates one imports typing.
A module outside the run path imports `typing` itself.
tests/unit/test_hints.py checks each stand-in and that a run does not import `typing`.
"""

from __future__ import annotations

# mypy and ruff read any `if TYPE_CHECKING:` as typing's (the name is what they look for)
TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any as Any
    from typing import Generic as Generic
    from typing import NoReturn as NoReturn
    from typing import Protocol as Protocol
    from typing import TextIO as TextIO
    from typing import TypeVar as TypeVar
    from typing import assert_never as assert_never
    from typing import cast as cast
    from typing import dataclass_transform as dataclass_transform
    from typing import overload as overload
else:
    __all__ = [
        "TYPE_CHECKING",
        "Any",
        "Generic",
        "NoReturn",
        "Protocol",
        "TextIO",
        "TypeVar",
        "assert_never",
        "cast",
        "dataclass_transform",
        "overload",
    ]

    class _Special:
        """A name that only annotations use (`Any`, `NoReturn`, `TextIO`)."""

        def __init__(self, name: str) -> None:
            self._name = name

        def __repr__(self) -> str:
            return f"pisa_mm.hints.{self._name}"

        def __getitem__(self, params: object) -> _Special:
            return self

    Any = _Special("Any")
    NoReturn = _Special("NoReturn")
    TextIO = _Special("TextIO")

    class TypeVar:
        """A type variable: only mypy reads its bounds and variance."""

        def __init__(self, name: str, *constraints: object, **options: object) -> None:
            self.__name__ = name

        def __repr__(self) -> str:
            return f"~{self.__name__}"

    class Generic:
        """A generic class's base: `Job[int]` at run time is `Job`."""

        __slots__ = ()

        def __class_getitem__(cls, params: object) -> type:
            return cls

    class Protocol(Generic):
        """A protocol's base; a class that names it as a base inherits its methods, as it
        does from typing's (isinstance against a protocol is not used)."""

        __slots__ = ()

    def cast(typ: object, val: object) -> object:
        return val

    def assert_never(arg: object, /) -> NoReturn:
        raise AssertionError(f"Expected code to be unreachable, but got: {arg!r}")

    def overload(func: object) -> object:
        return func

    def dataclass_transform(**kwargs: object) -> object:
        return lambda cls: cls
