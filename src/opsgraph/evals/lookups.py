"""What the runner reads from the (scratch) store beside a run's events.

The evaluators are pure; whatever they need from the store is looked up here once and
handed over in `RunFacts` or on the cards: the names of every record of the tenant, the
caller's own contact details, the full text of the records an answer cites (event payloads
trim tool output), and the stored values a card's `old` should show.
"""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from typing import Any

from pymongo.database import Database

from opsgraph.evals.matching import Aliases
from opsgraph.evals.records import Card, RunFacts, RunRecord
from opsgraph.operations.records import to_json
from opsgraph.operations.references import LOOKUPS

Document = dict[str, Any]

# What an argument or a source names → the collection of its records.
COLLECTIONS: dict[str, str] = {
    "member": "members", "booking": "bookings", "invoice": "invoices", "shift": "shifts",
    "staff": "staff", "resource": "resources", "event": "events", "document": "knowledge",
}


class StoreLookups:
    """Per-tenant lookups on one database, cached for the suite (nothing is written)."""

    def __init__(self, db: Database[Document]) -> None:
        self._db = db
        self._aliases: dict[str, Aliases] = {}
        self._lock = threading.Lock()

    def aliases(self, tenant: str) -> Aliases:
        """Every named record of the tenant: id → its names and keys."""
        with self._lock:
            if tenant not in self._aliases:
                aliases = Aliases()
                for collection, lookup in LOOKUPS.items():
                    fields = (*lookup.names, *lookup.keys)
                    if not fields:
                        continue
                    for doc in self._db[collection].find({"tenant_id": tenant}):
                        aliases.add(str(doc["_id"]), *(str(doc[f]) for f in fields
                                                        if doc.get(f)))
                self._aliases[tenant] = aliases
            return self._aliases[tenant]

    def _find(self, tenant: str, collection: str, record_id: Any) -> Document | None:
        if not isinstance(record_id, str) or not record_id:
            return None
        return self._db[collection].find_one({"tenant_id": tenant, "_id": record_id})

    def clock(self, tenant: str) -> tuple[str, datetime | None]:
        """The tenant's time zone and the Monday its demo data was seeded from (relative
        expected times are read against them)."""
        doc = self._db["tenants"].find_one({"_id": tenant}) or {}
        anchor = doc.get("seed_anchor")
        if isinstance(anchor, datetime) and anchor.tzinfo is None:
            anchor = anchor.replace(tzinfo=UTC)  # the store keeps UTC without an offset
        return str(doc.get("timezone") or "UTC"), anchor if isinstance(anchor,
                                                                        datetime) else None

    def caller_contacts(self, tenant: str, user: str) -> tuple[str, ...]:
        """The caller's own e-mail and phone (as a member or a staff member)."""
        out: list[str] = []
        for collection in ("members", "staff"):
            doc = self._db[collection].find_one(
                {"tenant_id": tenant, "$or": [{"_id": user}, {"email": user.lower()}]})
            if doc is not None:
                out += [str(doc[f]) for f in ("email", "phone") if doc.get(f)]
        return tuple(out)

    def source_texts(self, tenant: str, sources: list[dict[str, Any]]) -> tuple[str, ...]:
        """The stored records an answer cites, as JSON text."""
        texts = []
        for source in sources:
            collection = COLLECTIONS.get(str(source.get("kind", "")))
            doc = self._find(tenant, collection, source.get("id")) if collection else None
            if doc is not None:
                texts.append(json.dumps(to_json(doc), default=str, ensure_ascii=False))
        return tuple(texts)

    def before(self, tenant: str, card: Card) -> dict[str, Any] | None:
        """The stored values of `card.old`'s fields on the record the card changes."""
        if not card.old:
            return None
        for name, value in card.args.items():
            collection = COLLECTIONS.get(name.rstrip("_").removesuffix("_id"))
            doc = self._find(tenant, collection, value) if collection else None
            if doc is not None and all(k in doc for k in card.old):
                return {k: to_json(doc[k]) for k in card.old}
        return None

    def complete(self, run: RunRecord, tenant: str, user: str) -> None:
        """Attach the facts and each card's stored values to a parsed run."""
        run.facts = RunFacts(aliases=self.aliases(tenant),
                             caller_contacts=self.caller_contacts(tenant, user),
                             today=datetime.now(UTC).date().isoformat(),
                             source_texts=self.source_texts(tenant, run.sources))
        for card in run.cards:
            card.before = self.before(tenant, card)
