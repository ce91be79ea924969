"""The demo data set: a racquet and fitness club (`demo`, plan pro) and a small coworking
space (`acme`, plan basic) that proves tenant isolation.

Deterministic: ids are fixed (`mem_demo_001`, `res_demo_court1`, ...) and each kind of
record draws from its own seeded random stream. Dates are offsets from the *anchor*, the
Monday 00:00 UTC of the week the seed first runs, so bookings and shifts sit around "now"
and availability questions make sense; the anchor is kept on the tenant document, so a
later run reuses it. Idempotent: a record whose id exists is left alone, so running the
seed again changes nothing, not even records the operations have changed since. Only the
knowledge base, whose Markdown files are the source of truth, is rewritten. `reset=True`
wipes the tenant's domain data and seeds afresh at this week's anchor.

Any tenant id other than `acme` gets the demo club's data set. At `scale=LARGE` (or any
`Scale`) the club is the same but big: 10,000 members, 200,000 bookings reaching back
about a year and a half, 20,000 invoices, and its resources, staff, shifts and events
copied over eight sites. Large data goes in by bulk inserts in batches (`BATCH`).

Named records carry their search keys (store.search_keys), as every write does.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, time, timedelta
from functools import cached_property
from pathlib import Path
from typing import Any

from pymongo import UpdateOne
from pymongo.database import Database
from pymongo.errors import BulkWriteError

from opsgraph.store.catalogue_ids import object_id
from opsgraph.store.indexes import ensure_indexes
from opsgraph.store.search_keys import with_keys
from opsgraph.store.sections import sections, title_of
from opsgraph.yaml_text import load_yaml

Document = dict[str, Any]

DATA_DIR = Path(__file__).with_name("demo")
TENANTS = ("demo", "acme")
SEEDED = ("members", "staff", "shifts", "resources", "bookings", "events", "registrations",
          "invoices", "inbox", "knowledge", "catalogue", "tickets")
"""The collections the seed fills (and `reset` empties, with `outbox`)."""
DEFAULT_HOURS = {"weekday": ["07:00", "22:00"], "weekend": ["08:00", "20:00"]}
BOOKING_DAYS = range(-7, 14)  # a week of history and two weeks ahead
SHIFT_DAYS = range(0, 14)
BATCH = 5000
CATALOGUE_SECTIONS = {"resources": "resource", "classes": None, "plans": "plan",
                      "products": "product", "price_lists": "price_list"}
"""Catalogue YAML section → the type of its entries (`classes` entries name theirs)."""
CATALOGUES = {"knowledge": "catalogue.yaml"}
"""Knowledge directory → the catalogue that goes with that knowledge base (the club's)."""
"""Documents per bulk insert."""


@dataclass(frozen=True)
class Scale:
    """How big the club is: members, bookings (the oldest are dropped past this count),
    and sites (copies of its resources, staff, shift templates and events)."""

    members: int
    bookings: int
    sites: int
    booking_rate: float = 0.55

    def times(self, factor: float) -> Scale:
        """This scale times `factor` (at least one of each), e.g. for a quick test."""
        return replace(self, members=max(20, round(self.members * factor)),
                       bookings=max(1, round(self.bookings * factor)),
                       sites=max(1, round(self.sites * factor)))


LARGE = Scale(members=10_000, bookings=200_000, sites=8)
"""`opsgraph seed --scale large`: with two billing runs a member, about 20,000 invoices."""
SCALES = {"large": LARGE}


def anchor_monday(now: datetime) -> datetime:
    """Monday 00:00 UTC of the week containing `now`."""
    day = now.astimezone(UTC).date()
    return datetime.combine(day - timedelta(days=day.weekday()), time(0), tzinfo=UTC)


def load_dataset(tenant: str) -> Document:
    """The YAML description of a tenant's data set."""
    name = "acme" if tenant == "acme" else "demo"
    data: Document = load_yaml((DATA_DIR / f"{name}.yaml").read_text(encoding="utf-8"))
    return data


def _at(day: date, hhmm: str) -> datetime:
    hours, minutes = (int(part) for part in hhmm.split(":"))
    return datetime.combine(day, time(hours, minutes), tzinfo=UTC)


def _ascii(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isascii() and ch.isalnum())


def _surnames(last_names: list[str], members: int) -> list[str]:
    """The surnames generated members draw from: double-barrelled ones join the list when
    single ones would repeat names too often (a large club), so every name stays unique."""
    if members * 4 <= len(last_names) ** 2:
        return last_names
    return last_names + [f"{a}-{b}" for a in last_names for b in last_names if a != b]


def _site_copy(record: Document, site: int, fields: tuple[str, ...]) -> Document:
    return {**record, **{f: f"{record[f]} ({site})" for f in fields if record.get(f)}}


def at_scale(spec: Document, scale: Scale) -> Document:
    """The data set of a club like `spec` at `scale`: every resource, staff member, shift
    template and event once per site (site 1 keeps the originals' names), more members."""
    sites = range(2, scale.sites + 1)
    staff = list(spec["staff"])
    names = {person["name"] for person in staff}
    firsts, lasts = spec["first_names"], spec["last_names"]
    for n, person in enumerate(p for _ in sites for p in spec["staff"]):
        name = next(full for k in range(len(firsts) * len(lasts))
                    if (full := f"{firsts[(n + k) % len(firsts)]} "
                                f"{lasts[(n * 7 + k) % len(lasts)]}") not in names)
        names.add(name)
        first, last = name.split(" ", 1)
        staff.append({**person, "name": name,
                      "email": f"{_ascii(first)}.{_ascii(last)}@riverside.example"})
    resources = list(spec["resources"])
    for site in sites:
        for res in spec["resources"]:
            resources.append({**_site_copy(res, site, ("name", "location")),
                              "key": f"{res['key']}_s{site}", "code": f"{res['code']}-{site}"})
    return {**spec, "member_count": scale.members, "booking_rate": scale.booking_rate,
            "staff": staff, "resources": resources,
            "shift_templates": [_site_copy(t, site, ("location",)) if site > 1 else t
                                for site in range(1, scale.sites + 1)
                                for t in spec["shift_templates"]],
            "events": [_site_copy(e, site, ("title", "location")) if site > 1 else e
                       for site in range(1, scale.sites + 1) for e in spec["events"]]}


@dataclass
class DemoData:
    """Builds every document of one tenant's data set (pure: no store access)."""

    tenant: str
    spec: Document
    anchor: datetime
    now: datetime
    booking_days: range = BOOKING_DAYS
    booking_limit: int | None = None  # keep only the newest this many bookings
    _streams: dict[str, random.Random] = field(default_factory=dict)

    def rng(self, kind: str) -> random.Random:
        """A random stream per record kind, so adding events never reshuffles members."""
        if kind not in self._streams:
            self._streams[kind] = random.Random(f"{self.spec['random_seed']}:{kind}")
        return self._streams[kind]

    def day(self, offset: int) -> date:
        """The anchor's date plus `offset` days."""
        return (self.anchor + timedelta(days=offset)).date()

    def tenant_doc(self) -> Document:
        """The tenant's settings document (`tenants` is keyed by tenant id)."""
        return {**self.spec["tenant"], "created_at": self.anchor}

    @cached_property
    def members(self) -> list[Document]:
        """Named members first (stable ids), then generated ones up to `member_count`."""
        rng = self.rng("members")
        people: list[Document] = [dict(m) for m in self.spec["members"]]
        names = {p["name"] for p in people}
        emails = {p["email"] for p in people}
        surnames = _surnames(self.spec["last_names"], self.spec["member_count"])
        while len(people) < self.spec["member_count"]:
            first = rng.choice(self.spec["first_names"])
            last = rng.choice(surnames)
            email = f"{_ascii(first)}.{_ascii(last)}@{rng.choice(self.spec['email_domains'])}"
            if f"{first} {last}" in names or email in emails:
                continue
            names.add(f"{first} {last}")
            emails.add(email)
            people.append({
                "name": f"{first} {last}", "email": email,
                "phone": f"+44 7700 9{rng.randrange(10000, 100000)}",
                "membership": rng.choice(["standard"] * 5 + ["premium"] * 2
                                         + ["off_peak", "junior", "family"]),
                "status": "paused" if rng.random() < 0.05 else "active"})
        return [{"_id": f"mem_{self.tenant}_{n:03d}", "name": p["name"],
                 "email": p["email"].lower(), "phone": p.get("phone"),
                 "status": p.get("status", "active"), "membership": p["membership"],
                 "joined": self.day(-rng.randrange(30, 2000)).isoformat(),
                 "notes": p.get("notes", "")} for n, p in enumerate(people, start=1)]

    @cached_property
    def active_ids(self) -> list[str]:
        """Members who may book and register."""
        return [m["_id"] for m in self.members if m["status"] == "active"]

    @cached_property
    def staff(self) -> list[Document]:
        """Staff records."""
        return [{"_id": f"stf_{self.tenant}_{n:02d}", "name": s["name"], "email": s["email"],
                 "position": s["position"], "skills": list(s["skills"]),
                 "phone": f"+44 7700 8{n:05d}"}
                for n, s in enumerate(self.spec["staff"], start=1)]

    def shifts(self) -> list[Document]:
        """Two weeks of shifts from the anchor; some left open, nobody double-booked."""
        rng = self.rng("shifts")
        out: list[Document] = []
        for offset in SHIFT_DAYS:
            day = self.day(offset)
            busy: dict[str, list[tuple[datetime, datetime]]] = {}
            for n, tpl in enumerate(self.spec["shift_templates"]):
                if tpl.get("weekdays_only") and day.weekday() >= 5:
                    continue
                start, end = _at(day, tpl["start"]), _at(day, tpl["end"])
                fits = [s["_id"] for s in self.staff if tpl["role"] in s["skills"] and all(
                    b_end <= start or b_start >= end for b_start, b_end in busy.get(s["_id"], []))]
                rng.shuffle(fits)
                left_open = rng.random() < self.spec["open_shift_rate"]
                staff_id = None if left_open or not fits else fits[0]
                if staff_id:
                    busy.setdefault(staff_id, []).append((start, end))
                out.append({"_id": f"shf_{self.tenant}_{offset:02d}_{n}", "staff_id": staff_id,
                            "date": day.isoformat(), "start": start, "end": end,
                            "role": tpl["role"], "location": tpl["location"]})
        return out

    @cached_property
    def resources(self) -> list[Document]:
        """Bookable courts, studios and rooms."""
        return [{"_id": f"res_{self.tenant}_{r['key']}", "name": r["name"], "code": r["code"],
                 "kind": r["kind"], "capacity": r["capacity"], "location": r["location"],
                 "hours": r.get("hours", DEFAULT_HOURS), "slot_minutes": 60,
                 "status": r.get("status", "open")} for r in self.spec["resources"]]

    def bookings(self) -> list[Document]:
        """A week of history and two weeks ahead; no double bookings, some cancelled."""
        rng = self.rng("bookings")
        out: list[Document] = []
        member_busy: dict[str, list[tuple[datetime, datetime]]] = {}
        for offset in self.booking_days:
            day = self.day(offset)
            for res in self.resources:
                if res["status"] != "open" and offset >= 0:
                    continue  # closed for maintenance: its future bookings were moved
                hours = res["hours"]["weekend" if day.weekday() >= 5 else "weekday"]
                slot, closes = _at(day, hours[0]), _at(day, hours[1])
                while slot + timedelta(hours=1) <= closes:
                    length = timedelta(hours=2 if rng.random() < 0.2 else 1)
                    if rng.random() >= self.spec["booking_rate"] or slot + length > closes:
                        slot += timedelta(hours=1)
                        continue
                    member = rng.choice(self.active_ids)
                    taken = member_busy.setdefault(member, [])
                    if all(e <= slot or s >= slot + length for s, e in taken):
                        cancelled = rng.random() < 0.1
                        if not cancelled:
                            taken.append((slot, slot + length))
                        out.append({
                            "member_id": member,
                            "resource_id": res["_id"], "start": slot, "end": slot + length,
                            "status": "cancelled" if cancelled else "confirmed",
                            "created_at": slot - timedelta(days=rng.randrange(1, 10))})
                    slot += length
        if self.booking_limit is not None:
            out = out[max(0, len(out) - self.booking_limit):]
        return [{"_id": f"bkg_{self.tenant}_{n:04d}", **b} for n, b in enumerate(out, start=1)]

    @cached_property
    def events(self) -> list[Document]:
        """Events from the data set, dated from the anchor."""
        return [{"_id": f"evt_{self.tenant}_{n:02d}", "title": e["title"],
                 "start": _at(self.day(e["day"]), e["start"]),
                 "end": _at(self.day(e["day"]), e["end"]), "capacity": e["capacity"],
                 "location": e.get("location"), "description": e.get("description", ""),
                 "status": "scheduled"} for n, e in enumerate(self.spec["events"], start=1)]

    def registrations(self) -> list[Document]:
        """Registrations in arrival order; past capacity they are waitlisted."""
        rng = self.rng("registrations")
        out: list[Document] = []
        for event, spec in zip(self.events, self.spec["events"], strict=True):
            people = rng.sample(self.active_ids, k=min(spec["registrations"],
                                                      len(self.active_ids)))
            opened = event["start"] - timedelta(days=14)
            for n, member in enumerate(people):
                out.append({"_id": f"reg_{event['_id']}_{n + 1:03d}", "event_id": event["_id"],
                            "member_id": member, "at": opened + timedelta(hours=5 * n),
                            "status": "registered" if n < event["capacity"] else "waitlisted"})
        return out

    def invoices(self) -> list[Document]:
        """Two monthly billing runs (one overdue-prone, one recent) plus one-off invoices."""
        rng = self.rng("invoices")
        named = len(self.spec["members"])
        out: list[Document] = []
        for offset, recent in ((-35, False), (-5, True)):
            issued = self.day(offset)
            for n, member in enumerate(self.members):
                if member["status"] == "cancelled" and recent:
                    continue
                label = member["membership"].replace("_", "-").capitalize()
                line = {"description": f"{label} membership ({issued:%b %Y})",
                        "amount": float(self.spec["membership_prices"][member["membership"]])}
                roll = rng.random()
                if recent:
                    state = "paid" if roll < 0.55 else "open"
                elif n < named or roll < 0.8:
                    state = "paid"  # named members have a clean history tests rely on
                else:
                    state = "open" if roll < 0.92 else (
                        "refunded" if roll < 0.96 else "partially_refunded")
                out.append(self._invoice(len(out), member, [line], issued, state))
        for extra in self.spec["extra_invoices"]:
            member = self.members[extra["member"] - 1]
            line = {"description": extra["description"], "amount": float(extra["amount"])}
            out.append(self._invoice(len(out), member, [line], self.day(-20),
                                     extra.get("status", "paid")))
        return out

    def _invoice(self, n: int, member: Document, lines: list[Document], issued: date,
                 state: str) -> Document:
        seq = 1001 + n
        total = round(sum(line["amount"] for line in lines), 2)
        paid = 0.0 if state == "open" else total
        refunded = {"refunded": total, "partially_refunded": round(total / 2, 2)}.get(state, 0.0)
        refunds = [{"change_id": f"seed-{self.tenant}-{seq}", "amount": refunded,
                    "reason": "Medical cancellation (refund policy)",
                    "at": datetime.combine(issued + timedelta(days=10), time(11), tzinfo=UTC),
                    "by": self.staff[0]["_id"]}] if refunded else []
        return {"_id": f"inv_{self.tenant}_{seq}", "number": f"INV-{seq}", "seq": seq,
                "member_id": member["_id"], "member_name": member["name"], "lines": lines,
                "total": total, "paid": paid, "refunded": refunded, "refunds": refunds,
                "status": "open" if state == "open" else state,
                "issued": issued.isoformat(), "due": (issued + timedelta(days=14)).isoformat()}

    def inbox(self) -> list[Document]:
        """Inbound emails of the last days (some hostile), never dated in the future."""
        by_email = {m["email"]: m["_id"] for m in self.members}
        out: list[Document] = []
        for n, msg in enumerate(self.spec["inbox"], start=1):
            day = self.now.date() + timedelta(days=msg["day"])
            received = min(_at(day, msg["time"]), self.now - timedelta(minutes=7 * n))
            out.append({"_id": f"msg_{self.tenant}_{n:02d}", "from": msg["from"],
                        "from_name": msg["from_name"], "to": f"hello@{self.tenant}.example",
                        "subject": msg["subject"], "body": msg["body"],
                        "received_at": received, "status": msg["status"],
                        "member_id": by_email.get(msg["from"].lower())})
        return out

    def tickets(self) -> list[Document]:
        """Open maintenance tickets."""
        reporter = self.staff[-1]["_id"]
        return [{"_id": f"tkt_{self.tenant}_{n:02d}", "resource_id":
                 f"res_{self.tenant}_{t['resource']}", "description": t["description"],
                 "status": "open", "reported_by": reporter,
                 "reported_at": _at(self.day(t["day"]), "10:00")}
                for n, t in enumerate(self.spec["tickets"], start=1)]

    def knowledge(self) -> list[Document]:
        """One document per Markdown file, its sections parsed (store.sections) as every
        write of a document stores them; its first `# ` heading is the title."""
        out: list[Document] = []
        for path in sorted((DATA_DIR / self.spec["knowledge_dir"]).glob("*.md")):
            body = path.read_text(encoding="utf-8")
            title = title_of(path.stem, body, "markdown")
            out.append({"_id": f"kb_{self.tenant}_{path.stem}", "slug": path.stem,
                        "title": title, "body": body, "kind": "markdown",
                        "tags": path.stem.split("-"),
                        "sections": [s.to_json() for s in
                                     sections(path.stem, body, "markdown", title)]})
        return out

    def catalogue(self) -> list[Document]:
        """The catalogue's objects, one per YAML entry, as opsgraph.knowledge.catalogue
        reads them (`classes` entries name their type, class or event)."""
        name = CATALOGUES.get(self.spec["knowledge_dir"])
        if name is None:
            return []
        spec: Document = load_yaml((DATA_DIR / name).read_text(encoding="utf-8"))
        return [{"_id": object_id(self.tenant, entry["id"]), "key": entry["id"],
                 "type": kind or entry["type"],
                 **{k: v for k, v in entry.items() if k not in ("id", "type")}}
                for section, kind in CATALOGUE_SECTIONS.items()
                for entry in spec.get(section) or []]


def _insert_missing(db: Database[Document], name: str, tenant: str,
                    docs: list[Document]) -> None:
    """Insert the documents whose id is not there yet; existing ones are left as they are.

    The same effect as an upsert with `$setOnInsert`, at a fraction of its cost: bulk
    inserts of `BATCH` documents that skip the ids already present (the store refuses
    them as duplicates, which is the state we want; asking which ids exist first costs
    more, the store's `$in` being slow on long lists).
    """
    for first in range(0, len(docs), BATCH):
        batch = [{**with_keys(name, d), "tenant_id": tenant} for d in docs[first:first + BATCH]]
        try:
            db[name].insert_many(batch, ordered=False)
        except BulkWriteError as exc:
            if any(e.get("code") != 11000 for e in exc.details.get("writeErrors", [])):
                raise


def _overwrite(db: Database[Document], name: str, tenant: str, docs: list[Document]) -> None:
    requests = [UpdateOne({"_id": d["_id"], "tenant_id": tenant},
                          {"$set": {k: v for k, v in with_keys(name, d).items() if k != "_id"}},
                          upsert=True) for d in docs]
    if requests:
        db[name].bulk_write(requests, ordered=False)


def _sync(db: Database[Document], name: str, tenant: str, docs: list[Document]) -> int:
    """Write the documents that differ from what is stored, each with its `version` one
    higher; returns how many changed. (A knowledge document stored before its sections
    were seeded with it differs by them, so it is written once more, with them.)"""
    stored = {d["_id"]: d for d in db[name].find({"tenant_id": tenant})}
    changed = []
    for doc in docs:
        old = stored.get(doc["_id"])
        if old is None or any(old.get(k) != v for k, v in doc.items()):
            version = int((old or {}).get("version", 0)) + 1
            changed.append({**doc, "version": version})
    _overwrite(db, name, tenant, changed)
    return len(changed)


def _wipe(db: Database[Document], tenant: str) -> None:
    for name in (*SEEDED, "outbox"):
        db[name].delete_many({"tenant_id": tenant})
    db["tenants"].delete_one({"_id": tenant})


def _history_days(spec: Document, scale: Scale) -> int:
    """Days of booking history that hold a little more than `scale.bookings` (the
    oldest beyond the count are dropped)."""
    hours = sum(int(h[1][:2]) - int(h[0][:2]) for h in
                ((r.get("hours") or DEFAULT_HOURS)["weekday"] for r in spec["resources"]
                 if r.get("status", "open") == "open"))
    per_day = max(1.0, hours * scale.booking_rate / (1 + 0.2 * scale.booking_rate))
    return max(7, math.ceil(scale.bookings / per_day * 1.25) - BOOKING_DAYS.stop)


def _data(tenant: str, now: datetime, anchor: datetime, scale: Scale | None) -> DemoData:
    spec = load_dataset(tenant)
    if scale is None:
        return DemoData(tenant, spec, anchor, now)
    spec = at_scale(spec, scale)
    return DemoData(tenant, spec, anchor, now,
                    booking_days=range(-_history_days(spec, scale), BOOKING_DAYS.stop),
                    booking_limit=scale.bookings)


def seed(db: Database[Document], tenant: str = "demo", *, now: datetime | None = None,
         reset: bool = False, scale: Scale | None = None) -> dict[str, Any]:
    """Load a tenant's data set (idempotent), the demo club's at `scale` when given;
    returns how many records of each kind the data set has (all of them now stored)."""
    now = (now or datetime.now(UTC)).astimezone(UTC)
    ensure_indexes(db)
    if reset:
        _wipe(db, tenant)
    existing = db["tenants"].find_one({"_id": tenant}) or {}
    # Keep the first run's anchor: a later re-seed then fills gaps with the same dates.
    anchor = existing.get("seed_anchor") or anchor_monday(now)
    anchor = anchor.replace(tzinfo=UTC) if anchor.tzinfo is None else anchor
    data = _data(tenant, now, anchor, scale)
    db["tenants"].update_one({"_id": tenant}, {"$setOnInsert": {
        **data.tenant_doc(), "seed_anchor": anchor}}, upsert=True)
    builders = {"members": lambda: data.members, "staff": lambda: data.staff,
                "shifts": data.shifts, "resources": lambda: data.resources,
                "bookings": data.bookings, "events": lambda: data.events,
                "registrations": data.registrations, "invoices": data.invoices,
                "inbox": data.inbox, "tickets": data.tickets}
    counts: dict[str, int] = {}
    for name, build in builders.items():
        docs = build()
        _insert_missing(db, name, tenant, docs)
        counts[name] = len(docs)
        if name == "invoices" and docs:  # where invoices.list starts reading
            db["tenants"].update_one({"_id": tenant}, {"$max": {
                "invoice_seq": max(d["seq"] for d in docs)}})
    knowledge, catalogue = data.knowledge(), data.catalogue()
    if _sync(db, "knowledge", tenant, knowledge) + _sync(db, "catalogue", tenant, catalogue):
        db["tenants"].update_one({"_id": tenant}, {"$inc": {"knowledge_version": 1}})
    counts["knowledge"], counts["catalogue"] = len(knowledge), len(catalogue)
    tenant_doc = db["tenants"].find_one({"_id": tenant}) or {}
    return {"tenant": tenant, "plan": tenant_doc.get("plan"),
            **{name: counts[name] for name in SEEDED}}


def seed_all(db: Database[Document], *, now: datetime | None = None) -> dict[str, Any]:
    """Seed every demo tenant (`demo` and `acme`); returns each one's counts."""
    return {tenant: seed(db, tenant, now=now) for tenant in TENANTS}
