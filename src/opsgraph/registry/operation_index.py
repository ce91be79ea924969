"""What the registry needs to know of the operations catalogue: id, kind, verb, roles.

The catalogue (`opsgraph.operations.catalogue.CATALOGUE`) imports every domain module and
its handlers; the registry only needs a few facts per operation, so it reads them once,
on first use, into `OperationInfo` records. Loaders accept an explicit index too, which keeps
validation a pure function of (files, index).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from opsgraph.operations.catalogue import CATALOGUE
from opsgraph.principal import Role

OperationKind = Literal["read", "write"]


@dataclass(frozen=True, slots=True)
class OperationInfo:
    """One catalogue entry, as the registry sees it."""

    id: str
    kind: OperationKind
    verb: str
    description: str = ""
    roles: frozenset[Role] | None = None
    """Who may call it (admin always may); None when the index does not say (no check)."""

    def allows(self, role: Role) -> bool:
        """True when `role` may call this operation (unknown roles: assume it may)."""
        return role is Role.ADMIN or self.roles is None or role in self.roles

    @property
    def domain(self) -> str:
        """`members.update` → `members`."""
        return self.id.split(".", 1)[0]


OperationIndex = Mapping[str, OperationInfo]

_lock = threading.Lock()
_cached: dict[str, OperationInfo] | None = None


def index_of(operations: Iterable[OperationInfo]) -> dict[str, OperationInfo]:
    """An index keyed by operation id."""
    return {op.id: op for op in operations}


def operation_index() -> OperationIndex:
    """The real catalogue's index, built on first use and kept for the process."""
    global _cached
    with _lock:
        if _cached is None:
            _cached = index_of(
                OperationInfo(op.id, op.kind, op.verb, op.description, op.roles)
                for op in CATALOGUE.values()
            )
        return _cached
