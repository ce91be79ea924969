"""A scratch database for one eval suite: seeded with the demo tenants, dropped after.

The suite's runs raise approval cards (pending changes); none of them may reach the user's
own tenant. For the length of the suite the process points at a fresh database on the
same server (`<database>_eval_<random>`), then drops it and points back.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pymongo.database import Database

from opsgraph.bootstrap import prepare_store
from opsgraph.settings import environment_variable, get_settings
from opsgraph.store.client import get_client, get_db
from opsgraph.store.seed import seed_all

ENV = "OPSGRAPH_DB"


def _forget_process_state() -> None:
    """Settings are read again and the graph's checkpointer is rebuilt on the new database."""
    from opsgraph.engine.graph import reset_graph  # heavy: langgraph (cold start)

    get_settings.cache_clear()
    reset_graph()


@contextmanager
def scratch_database() -> Iterator[Database[dict[str, Any]]]:
    """Point the process at a new, seeded database; drop it and point back afterwards."""
    name = f"{get_settings().database[:30]}_eval_{uuid.uuid4().hex[:10]}"
    try:
        with environment_variable(ENV, name):
            _forget_process_state()
            try:
                db = prepare_store(get_db())
                seed_all(db)
                yield db
            finally:
                get_client().drop_database(name)
    finally:
        _forget_process_state()
