"""`opsgraph.errors`' docstring draws every error class of the package: one missing from the
drawing (or a drawn one that no longer exists) fails here."""

from __future__ import annotations

import importlib
import pkgutil
import re

import opsgraph
from opsgraph import errors
from opsgraph.errors import OpsgraphError

SKIP = ("opsgraph.api.lambda_handler",)  # builds the app at import: not needed for classes


def _classes(root: type[OpsgraphError]) -> set[str]:
    found = set()
    for sub in root.__subclasses__():
        if sub.__module__.startswith("opsgraph.") and not sub.__module__.startswith(
                "opsgraph.tests"):
            found.add(sub.__name__)
        found |= _classes(sub)
    return found


def test_every_error_class_is_drawn_and_every_drawn_class_exists() -> None:
    for info in pkgutil.walk_packages(opsgraph.__path__, "opsgraph."):
        if info.name not in SKIP and not info.name.endswith("__main__"):
            importlib.import_module(info.name)
    drawn = set(re.findall(r"[├└]── (\w+)", errors.__doc__ or ""))
    live = _classes(OpsgraphError)
    assert live - drawn == set(), "error classes the drawing in errors.py leaves out"
    assert drawn - live == set(), "classes drawn in errors.py that no longer exist"
