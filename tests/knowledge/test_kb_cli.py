"""`opsgraph kb add|rm|list` against the real store: documents added, replaced and
removed, the knowledge version bumped by each change, bad input refused with nothing
written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
Db = Any


def kb(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "opsgraph.cli", "kb", *args], env=env,
                          cwd=ROOT, capture_output=True, text=True, timeout=120)


def _version(db: Db) -> int:
    return int(db["tenants"].find_one({"_id": "demo"}).get("knowledge_version", 0))


def test_add_replace_list_and_remove(demo_db: Db, store_env: dict[str, str],
                                     tmp_path: Path) -> None:
    start = _version(demo_db)
    doc = tmp_path / "Locker Rules.md"
    doc.write_text("# Locker rules\n\n## Day lockers\nEmptied at 22:30.\n", encoding="utf-8")
    added = kb(store_env, "add", str(doc), "--json")
    assert added.returncode == 0, added.stderr
    result = json.loads(added.stdout)
    assert result == {"slug": "locker-rules", "title": "Locker rules", "kind": "markdown",
                      "version": 1, "bytes": len(doc.read_bytes()), "sections": 1,
                      "embedded": 1, "created": True, "knowledge_version": start + 1}
    stored = demo_db["knowledge"].find_one({"tenant_id": "demo", "slug": "locker-rules"})
    assert [s["id"] for s in stored["sections"]] == ["locker-rules#day-lockers"]

    note = tmp_path / "note.txt"
    note.write_text("Day lockers are emptied at 23:00 from January.", encoding="utf-8")
    replaced = kb(store_env, "add", str(note), "--slug", "locker-rules", "--title",
                  "Locker rules", "--json")
    assert replaced.returncode == 0, replaced.stderr
    assert json.loads(replaced.stdout)["version"] == 2
    stored = demo_db["knowledge"].find_one({"tenant_id": "demo", "slug": "locker-rules"})
    assert (stored["kind"], stored["sections"][0]["id"]) == ("text", "locker-rules#_top")
    assert _version(demo_db) == start + 2

    listed = json.loads(kb(store_env, "list", "--json").stdout)
    assert listed["knowledge_version"] == start + 2
    slugs = [d["slug"] for d in listed["documents"]]
    assert "locker-rules" in slugs and "booking-policy" in slugs and slugs == sorted(slugs)

    removed = kb(store_env, "rm", "locker-rules")
    assert removed.returncode == 0, removed.stderr
    assert "removed locker-rules" in removed.stdout
    assert demo_db["knowledge"].find_one({"tenant_id": "demo", "slug": "locker-rules"}) is None
    assert _version(demo_db) == start + 3
    again = kb(store_env, "rm", "locker-rules")
    assert again.returncode == 2 and "document 'locker-rules' not found" in again.stderr


def test_bad_input_is_refused_and_writes_nothing(demo_db: Db, store_env: dict[str, str],
                                                 tmp_path: Path) -> None:
    start = _version(demo_db)
    count = demo_db["knowledge"].count_documents({})
    empty = tmp_path / "empty.md"
    empty.write_text("  \n\n", encoding="utf-8")
    binary = tmp_path / "image.md"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe")
    big = tmp_path / "big.txt"
    big.write_text("x" * (1024 * 1024 + 1), encoding="utf-8")
    pdf = tmp_path / "policy.pdf"
    pdf.write_bytes(b"%PDF-1.7")
    good = tmp_path / "good.md"
    good.write_text("# Good\ntext", encoding="utf-8")
    for args, message in [((str(empty),), "empty document"),
                          ((str(binary),), "binary content"),
                          ((str(big),), "over the 1,048,576-byte limit"),
                          ((str(pdf),), "not a .md or .txt file"),
                          ((str(tmp_path / "missing.md"),), "no such file"),
                          ((str(good), str(empty)), "empty document"),  # all or nothing
                          ((str(good), "--slug", "Bad Slug"), "slug 'Bad Slug' is not valid"),
                          ((str(good), "--tenant", "nobody"), "tenant 'nobody' not found")]:
        done = kb(store_env, "add", *args)
        assert done.returncode == 2, (args, done.stderr)
        assert message in done.stderr, (args, done.stderr)
    assert demo_db["knowledge"].count_documents({}) == count
    assert _version(demo_db) == start
