"""`opsgraph eval --compare A.json B.json`: two reports side by side.

Dimensions (overall and per split) with B − A in percentage points, cost per case, and the
flips: cases whose result on a dimension changed between the two reports.
"""

from __future__ import annotations

from typing import Any

from opsgraph.evals.cases import SPLITS
from opsgraph.evals.render import pct
from opsgraph.evals.scores import DIMENSIONS

COST_KEYS = ("seconds_median", "model_calls_median", "input_tokens_mean",
             "output_tokens_mean")


def _pair(a: float | None, b: float | None) -> dict[str, float | None]:
    delta = None if a is None or b is None else b - a
    return {"a": a, "b": b, "delta": delta}


def _scores(dims: dict[str, Any]) -> dict[str, float | None]:
    return {name: (dims.get(name) or {}).get("score") for name in DIMENSIONS}


def _flips(a: dict[str, Any], b: dict[str, Any]) -> list[dict[str, Any]]:
    by_id = {c["id"]: c for c in b["cases"]}
    flips = []
    for case in a["cases"]:
        other = by_id.get(case["id"])
        if other is None:
            continue
        for name in ("case", *DIMENSIONS):
            was = case["passed"] if name == "case" else case["scores"].get(name, {}).get(
                "passed")
            now = other["passed"] if name == "case" else other["scores"].get(name, {}).get(
                "passed")
            if was is not None and now is not None and was != now:
                flips.append({"id": case["id"], "split": case["split"], "dimension": name,
                              "a": was, "b": now,
                              "reason": None if now else other["scores"].get(name, {}).get(
                                  "reason")})
    return flips


def compare_reports(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """The comparison document (`--json` prints it)."""
    sa, sb = _scores(a["dimensions"]), _scores(b["dimensions"])
    splits = {}
    for split in SPLITS:
        pa, pb = a.get("splits", {}).get(split), b.get("splits", {}).get(split)
        if pa or pb:
            da = _scores(pa["dimensions"]) if pa else dict.fromkeys(DIMENSIONS)
            db = _scores(pb["dimensions"]) if pb else dict.fromkeys(DIMENSIONS)
            splits[split] = {n: _pair(da[n], db[n]) for n in DIMENSIONS}
    ids_a, ids_b = {c["id"] for c in a["cases"]}, {c["id"] for c in b["cases"]}
    return {
        "a": {k: a.get(k) for k in ("model", "created_at", "passed")} | {"cases": len(ids_a)},
        "b": {k: b.get(k) for k in ("model", "created_at", "passed")} | {"cases": len(ids_b)},
        "dimensions": {n: _pair(sa[n], sb[n]) for n in DIMENSIONS},
        "splits": splits,
        "cost": {k: _pair(a.get("cost", {}).get(k), b.get("cost", {}).get(k))
                 for k in COST_KEYS},
        "flips": _flips(a, b),
        "only_a": sorted(ids_a - ids_b), "only_b": sorted(ids_b - ids_a),
    }


def _delta(pair: dict[str, float | None], scale: float = 100.0, unit: str = " pt") -> str:
    d = pair["delta"]
    return "–" if d is None else f"{scale * d:+.1f}{unit}"


def _rows(title: str, pairs: dict[str, dict[str, float | None]]) -> list[str]:
    out = [f"{title:<22} {'A':>8} {'B':>8} {'B−A':>10}"]
    out += [f"  {name:<20} {pct(p['a']):>8} {pct(p['b']):>8} {_delta(p):>10}"
            for name, p in pairs.items()]
    return out


def render_compare(cmp: dict[str, Any]) -> str:
    """The side-by-side table `--compare` prints."""
    a, b = cmp["a"], cmp["b"]
    lines = [f"A: {a['model']} ({a['cases']} cases, {a['created_at']})",
             f"B: {b['model']} ({b['cases']} cases, {b['created_at']})", "",
             *_rows("dimension", cmp["dimensions"])]
    for split, pairs in cmp["splits"].items():
        lines += ["", *_rows(split, pairs)]
    lines += ["", f"{'per case':<22} {'A':>8} {'B':>8} {'B−A':>10}"]
    for key, p in cmp["cost"].items():
        fa, fb = ("–" if p[k] is None else f"{p[k]:.1f}" for k in ("a", "b"))
        lines.append(f"  {key:<20} {fa:>8} {fb:>8} {_delta(p, 1.0, ''):>10}")
    lines += ["", f"flips ({len(cmp['flips'])}):"]
    lines += [f"  {f['id']} [{f['split']}] {f['dimension']}: "
              f"{'pass' if f['a'] else 'fail'} → {'pass' if f['b'] else 'fail'}"
              + (f" ({f['reason']})" if f["reason"] else "") for f in cmp["flips"]]
    if cmp["only_a"] or cmp["only_b"]:
        lines.append(f"only in A: {', '.join(cmp['only_a']) or 'none'}; only in B: "
                     f"{', '.join(cmp['only_b']) or 'none'}")
    return "\n".join(lines)
