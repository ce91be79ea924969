"""The flowchart of a harness version, drawn from its JSON alone (no model), so the picture
and the logic cannot drift: Mermaid text for the command line and documents, and a
self-contained SVG the dashboard shows inline.

One node per step, labelled with its title and type and shaped by type; steps grouped (in
Mermaid) or coloured (in SVG) by layer; edges for `next` and the following step, `then` /
`else`, a switch's cases (labelled with their condition) and `default`; a guard's block
rule, and every step that ends the run, lead to End. Both functions are pure and
deterministic: the same document draws the same picture, byte for byte.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from typing import Any

from opsgraph.harness.spec import LAYERS, Condition, Guard, HarnessDoc, Step, Switch
from opsgraph.harness.validate import is_final, successors

START, END = "run_start", "run_end"
LAYER_COLOURS: dict[str, tuple[str, str]] = {
    # layer: (fill, stroke)
    "safety": ("#fde2e1", "#c0392b"),
    "policy": ("#fdf0d5", "#b9770e"),
    "routing": ("#e4ecfb", "#2e5cb8"),
    "knowledge": ("#e1f5ee", "#148f68"),
    "core": ("#ece6f8", "#6c3fb5"),
    "presentation": ("#eef0f2", "#5d6d7e"),
}
MERMAID_SHAPES: dict[str, tuple[str, str]] = {
    "guard": ("{{", "}}"), "check": ("{", "}"), "switch": ("{", "}"), "set": ("[/", "/]"),
    "search": ("[(", ")]"), "tool": ("[/", "\\]"), "llm": ("([", "])"), "agent": (">", "]"),
    "supervisor": ("[[", "]]"), "clarify": ("(", ")"), "answer": ("(", ")"),
    "stop": ("(", ")"),
}


@dataclass(frozen=True, slots=True)
class Edge:
    source: str
    target: str
    label: str


def edges(doc: HarnessDoc) -> list[Edge]:
    """Every edge of the flowchart (step ids, with START and END), in document order."""
    out = [Edge(START, doc.steps[0].id, "")]
    ids = [s.id for s in doc.steps]
    for n, step in enumerate(doc.steps):
        following = ids[n + 1] if n + 1 < len(ids) else None
        if isinstance(step, Guard) and any(r.action == "block" for r in step.rules):
            out.append(Edge(step.id, END, "block"))
        for label, target in successors(step, following):
            if isinstance(step, Switch) and label.startswith("case "):
                label = condition_text(step.cases[int(label[5:]) - 1].if_)
            out.append(Edge(step.id, target, "" if label == "next" else label))
        if is_final(step):
            out.append(Edge(step.id, END, ""))
    return out


def condition_text(cond: Condition, limit: int = 40) -> str:
    """A condition in a few words: `risk = medium`, `message ~ hours?`, `all(...)`."""
    def text(c: Condition) -> str:
        for name, sub in (("all", c.all), ("any", c.any)):
            if sub is not None:
                return f"{name}({', '.join(text(s) for s in sub)})"
        if c.not_ is not None:
            return f"not {text(c.not_)}"
        for field, sign in (("eq", "="), ("ne", "≠"), ("in_", "in"), ("contains", "has"),
                            ("matches", "~"), ("exists", "exists"), ("gt", ">"), ("lt", "<")):
            if field in c.model_fields_set:
                value = getattr(c, field)
                shown = value if isinstance(value, str) else _json(value)
                return f"{c.var} {sign} {shown}"
        return str(c.var)

    out = text(cond)
    return out if len(out) <= limit else out[: limit - 1] + "…"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


# --- Mermaid ------------------------------------------------------------------------------

def mermaid(doc: HarnessDoc) -> str:
    """The version as a Mermaid flowchart (top-down), one subgraph per layer."""
    lines = ["flowchart TD", f"  {START}((Start))", f"  {END}((End))"]
    for layer in LAYERS:
        steps = [s for s in doc.steps if s.layer == layer]
        if not steps:
            continue
        lines.append(f"  subgraph layer_{layer} [{layer}]")
        for step in steps:
            opening, closing = MERMAID_SHAPES[step.type]
            label = f"{_mm(step.title)}<br/><small>{step.type}</small>"
            lines.append(f'    {_node(step.id)}{opening}"{label}"{closing}')
        lines.append("  end")
    for edge in edges(doc):
        arrow = f" -- \"{_mm(edge.label)}\" -->" if edge.label else " -->"
        lines.append(f"  {_node(edge.source)}{arrow} {_node(edge.target)}")
    for layer in LAYERS:
        fill, stroke = LAYER_COLOURS[layer]
        lines.append(f"  classDef {layer} fill:{fill},stroke:{stroke}")
    for layer in LAYERS:
        ids = [_node(s.id) for s in doc.steps if s.layer == layer]
        if ids:
            lines.append(f"  class {','.join(ids)} {layer}")
    return "\n".join(lines) + "\n"


def _node(step_id: str) -> str:
    """Step ids are prefixed so that none is a Mermaid keyword (`end`) or START/END."""
    return step_id if step_id in (START, END) else f"s_{step_id}"


def _mm(text: str) -> str:
    """Text inside a quoted Mermaid label: entity codes for what would end or break it."""
    return (text.replace("&", "#amp;").replace('"', "#quot;").replace("<", "#lt;")
            .replace(">", "#gt;").replace("\n", " "))


# --- SVG ----------------------------------------------------------------------------------

NODE_W, NODE_H, GAP_X, GAP_Y, MARGIN, LANE_GAP = 190, 54, 40, 64, 24, 14
TERMINAL_RX, TERMINAL_RY = 40, 20
TITLE_CHARS = 24


def svg(doc: HarnessDoc) -> str:
    """The version as a self-contained SVG: steps in rows by their depth from Start; an
    edge that skips rows runs down a lane of its own on the left, so it crosses no node."""
    rows = _rows(doc)
    depth_of = {node: d for d, row in enumerate(rows) for node in row}
    all_edges = edges(doc)
    long = [e for e in all_edges if depth_of[e.target] - depth_of[e.source] > 1]
    gutter = LANE_GAP * (len(long) + 1)
    width = max(len(r) for r in rows) * (NODE_W + GAP_X) - GAP_X + 2 * MARGIN + gutter
    height = len(rows) * (NODE_H + GAP_Y) - GAP_Y + 2 * MARGIN
    centre: dict[str, tuple[float, float]] = {}
    for depth, row in enumerate(rows):
        row_w = len(row) * (NODE_W + GAP_X) - GAP_X
        x0 = gutter + (width - gutter - row_w) / 2
        for i, node in enumerate(row):
            centre[node] = (x0 + i * (NODE_W + GAP_X) + NODE_W / 2,
                            MARGIN + depth * (NODE_H + GAP_Y) + NODE_H / 2)
    by_id = {s.id: s for s in doc.steps}
    title = html.escape(str(doc.metadata.get("title") or "harness"))
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:.0f} {height:.0f}" '
           f'width="{width:.0f}" height="{height:.0f}" role="img" aria-label="{title}" '
           'font-family="system-ui, sans-serif" font-size="12">',
           "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" "
           "markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\">"
           "<path d=\"M0,0 L10,5 L0,10 z\" fill=\"#555\"/></marker></defs>"]
    for edge in all_edges:
        lane = gutter - LANE_GAP * (long.index(edge) + 1) if edge in long else None
        out.append(_svg_edge(edge, centre, depth_of, lane))
    for node in (n for row in rows for n in row):
        x, y = centre[node]
        out.append(_svg_node(node, by_id.get(node), x, y))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _rows(doc: HarnessDoc) -> list[list[str]]:
    """Nodes by depth: the longest path from Start over forward edges (a back edge of a
    cycle does not push its target down); END on a row of its own at the bottom."""
    order = [START, *(s.id for s in doc.steps)]
    index = {node: n for n, node in enumerate(order)}
    out_edges: dict[str, list[str]] = {}
    for edge in edges(doc):
        if edge.target != END:
            out_edges.setdefault(edge.source, []).append(edge.target)
    depth = {START: 0}
    # forward edges go to a later step in the list; a branch back up is a back edge
    for node in order:
        for target in out_edges.get(node, []):
            if index[target] > index[node]:
                depth[target] = max(depth.get(target, 0), depth.get(node, 0) + 1)
    rows: list[list[str]] = [[] for _ in range(max(depth.values()) + 1)]
    for node in order:
        rows[depth.get(node, 1)].append(node)
    rows.append([END])
    return rows


def _svg_node(node: str, step: Step | None, x: float, y: float) -> str:
    if step is None:
        label = "Start" if node == START else "End"
        return (f'<g class="terminal" data-node="{node}"><ellipse cx="{x:.1f}" cy="{y:.1f}" '
                f'rx="{TERMINAL_RX}" ry="{TERMINAL_RY}" fill="#fff" stroke="#333"/>'
                f'<text x="{x:.1f}" y="{y + 4:.1f}" text-anchor="middle">{label}</text></g>')
    fill, stroke = LAYER_COLOURS[step.layer]
    w, h = NODE_W / 2, NODE_H / 2
    if step.type in ("check", "switch"):
        shape = (f'<polygon points="{x - w:.1f},{y:.1f} {x:.1f},{y - h:.1f} {x + w:.1f},{y:.1f} '
                 f'{x:.1f},{y + h:.1f}"')
    elif step.type == "guard":
        shape = (f'<polygon points="{x - w:.1f},{y:.1f} {x - w + 14:.1f},{y - h:.1f} '
                 f'{x + w - 14:.1f},{y - h:.1f} {x + w:.1f},{y:.1f} {x + w - 14:.1f},'
                 f'{y + h:.1f} {x - w + 14:.1f},{y + h:.1f}"')
    else:
        radius = 24 if step.type in ("answer", "clarify", "stop", "llm") else 4
        shape = (f'<rect x="{x - w:.1f}" y="{y - h:.1f}" width="{NODE_W}" height="{NODE_H}" '
                 f'rx="{radius}"')
    title = step.title if len(step.title) <= TITLE_CHARS else step.title[:TITLE_CHARS - 1] + "…"
    return (f'<g class="step layer-{step.layer}" data-step="{html.escape(step.id)}" '
            f'data-type="{step.type}"><title>{html.escape(step.description)}</title>'
            f'{shape} fill="{fill}" stroke="{stroke}" stroke-width="1.5"/>'
            f'<text x="{x:.1f}" y="{y - 3:.1f}" text-anchor="middle" font-weight="600">'
            f'{html.escape(title)}</text>'
            f'<text x="{x:.1f}" y="{y + 13:.1f}" text-anchor="middle" fill="#555">'
            f'{step.type} · {html.escape(step.id)}</text></g>')


def _svg_edge(edge: Edge, centre: dict[str, tuple[float, float]],
              depth_of: dict[str, int], lane: float | None) -> str:
    (x1, y1), (x2, y2) = centre[edge.source], centre[edge.target]
    half = _half_height(edge.source)
    if lane is not None:  # skips rows: out to the left, down its lane, into the target
        path = (f"M{x1 - _half_width(edge.source):.1f},{y1:.1f} H{lane:.1f} V{y2:.1f} "
                f"H{x2 - _half_width(edge.target):.1f}")
        lx, ly = lane, y1 + NODE_H
    elif depth_of[edge.target] > depth_of[edge.source]:
        start, finish = (x1, y1 + half), (x2, y2 - _half_height(edge.target))
        mid_y = (start[1] + finish[1]) / 2
        path = (f"M{start[0]:.1f},{start[1]:.1f} C{start[0]:.1f},{mid_y:.1f} "
                f"{finish[0]:.1f},{mid_y:.1f} {finish[0]:.1f},{finish[1]:.1f}")
        lx, ly = (start[0] + finish[0]) / 2, mid_y
    else:  # a back edge (a cycle): around the right of both nodes
        side = max(x1, x2) + NODE_W / 2 + GAP_X / 2
        path = (f"M{x1 + NODE_W / 2:.1f},{y1:.1f} C{side:.1f},{y1:.1f} {side:.1f},{y2:.1f} "
                f"{x2 + NODE_W / 2:.1f},{y2:.1f}")
        lx, ly = side, (y1 + y2) / 2
    label = (f'<text x="{lx:.1f}" y="{ly - 3:.1f}" text-anchor="middle" fill="#333" '
             f'font-size="11">{html.escape(edge.label)}</text>' if edge.label else "")
    return (f'<g class="edge" data-from="{html.escape(edge.source)}" '
            f'data-to="{html.escape(edge.target)}"><path d="{path}" fill="none" '
            f'stroke="#555" stroke-width="1.2" marker-end="url(#arrow)"/>{label}</g>')


def _half_width(node: str) -> float:
    return TERMINAL_RX if node in (START, END) else NODE_W / 2


def _half_height(node: str) -> float:
    return TERMINAL_RY if node in (START, END) else NODE_H / 2
