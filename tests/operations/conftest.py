"""Fixtures: a seeded database shared by read-only tests, and a private copy per writing test.

Seeding costs a few hundred milliseconds; a server-side copy of a seeded template plus its
indexes costs about half, which keeps the writing tests fast. The seed itself is tested in
tests/store.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pymongo.database import Database

from tests.seeded import copy_into, seeded_database

from .support import NOW

Document = dict[str, Any]


@pytest.fixture(scope="session")
def shared_db(mongo_uri: str) -> Iterator[Database[Document]]:
    """demo + acme seeded once per session; tests using it must never write."""
    yield from seeded_database(mongo_uri, "ops_shared", NOW)


@pytest.fixture(scope="session")
def template_db(mongo_uri: str) -> Iterator[Database[Document]]:
    """A pristine seeded database that only ever gets copied."""
    yield from seeded_database(mongo_uri, "ops_template", NOW)


@pytest.fixture
def seeded(db: Database[Document], template_db: Database[Document]) -> Database[Document]:
    """This test's own database holding a copy of the seeded demo + acme data."""
    copy_into(template_db, db)
    return db
