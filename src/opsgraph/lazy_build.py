"""Pydantic models built on first use, one build at a time (`LazyModel`).

Building a model (its core schema, validator and serializer) costs CPU at import: the
Lambda handler's import built about 80 models, most of which neither `/health` nor the
first chat request ever validates (the inputs of every operation but the one called, the
admin routes' bodies, the catalogue's object types). A `LazyModel` subclass is built when
it is first used instead, or never.

Why not pydantic's `defer_build` alone: in the pinned line (2.13) a deferred model is
rebuilt on first use without a lock (pydantic#11849, #13419), and tool calls validate
concurrently (eight at once), so two threads could rebuild one model together, one reading
the class's attributes while the other replaces them. Every build of a deferred model goes
through `cls.model_rebuild` (the mock validator, serializer and core schema that pydantic
puts on the class call it, and so does a direct call), and `LazyModel.model_rebuild` holds
one process-wide lock: one build at a time, and a thread that finds the model built after
waiting returns at once with the real validator. A model that is built is never rebuilt,
so its validator is used without the lock from then on. `model_json_schema` waits for a
build under way too: it reads the core schema, which pydantic takes off the class while it
builds it (its validator and serializer stay), and a read then would find the base class's.

The lock covers the builds of lazy models only. A model built eagerly (at its class
statement) that had a lazy model as a field would build that model's schema outside the
lock, so it must not have one: tests/test_lazy_build.py holds every opsgraph model to it.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

_BUILDS = threading.RLock()
"""Held while a lazy model is built (reentrant: building one may rebuild another)."""


class LazyModel(BaseModel):
    """A model built on first use, under `_BUILDS` (see the module docstring)."""

    model_config = ConfigDict(defer_build=True)

    @classmethod
    def model_rebuild(cls, *, force: bool = False, raise_errors: bool = True,
                      _parent_namespace_depth: int = 2,
                      _types_namespace: Mapping[str, Any] | None = None) -> bool | None:
        """`BaseModel.model_rebuild` under the build lock."""
        # One more frame (this one) between the caller and pydantic's namespace lookup.
        depth = _parent_namespace_depth + 1 if _parent_namespace_depth > 0 else 0
        with _BUILDS:
            return super().model_rebuild(force=force, raise_errors=raise_errors,
                                         _parent_namespace_depth=depth,
                                         _types_namespace=_types_namespace)

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """`BaseModel.model_json_schema`, once the model is built (under the build lock).

        pydantic reads the class's core schema first and rebuilds when it finds the mock.
        But while another thread builds this model, pydantic has taken the mock off the
        class, so the read finds its base's (`OpInput`'s) instead. That would build the base,
        and once the base is built, its schema would be read in place of this one. Here a
        model not yet built waits for its build first, so the schema read is its own."""
        if not cls.__pydantic_complete__:
            cls.model_rebuild()
        return super().model_json_schema(*args, **kwargs)
