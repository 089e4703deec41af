"""Closed vocabularies of events: kinds, tags, memory orders, scopes, address spaces."""

from __future__ import annotations

from pisa_mm.enums import Enum, IntEnum


class Kind(Enum):
    READ = "R"
    WRITE = "W"
    FENCE = "F"
    EXIT = "EXIT"  # end of one path of a work-item; carries no memory effect
    COLLECTIVE = "COLL"  # a sub-group collective instance; carries no memory effect


class Tag(Enum):
    """What produced a read, write or fence, beyond its kind."""

    PLAIN = "plain"
    INIT = "init"  # the init write of a location instance
    RMW = "rmw"  # a half of an iatom/fatom (a failed cas's lone read too)
    ARRIVE = "arrive"  # barrier.workgroup, first event: release fence, WG scope, both spaces
    DEPART = "depart"  # barrier.workgroup, second event: acquire fence, same
    ASYNC = "async"  # performed by a cp.async agent of the issuing work-item
    RETURN = "return"  # an EXIT reached by `return`
    INVALID = "invalid"  # an EXIT at an access whose address is no location (BADADDR)


class Order(Enum):
    NA = "na"  # weak (non-atomic) accesses, async-copy accesses, init writes
    RLX = "rlx"
    ACQ = "acq"
    REL = "rel"
    ACQ_REL = "acq_rel"
    SC = "sc"


class Scope(IntEnum):
    """Scope levels, ordered by inclusion (PISA 1.2.1.2)."""

    SG = 0
    WG = 1
    GPU = 2
    SYS = 3


class Space(Enum):
    GLOBAL = "global"
    SHARED = "shared"
    PRIVATE = "private"
    CONST = "const"
