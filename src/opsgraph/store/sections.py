"""Sections of a Markdown or plain-text document: the parser the knowledge base and the
demo seed share (the seed sits below opsgraph.knowledge, and stores a document's sections
with it, as every other write does).

Sections come from ATX headings (`#` to `######`; lines inside fenced code blocks are not
headings). A section's id is `<doc-slug>#<path>`, the path being the slugs of its heading
and of the headings above it joined by `/`; a repeated path gets `-2`, `-3`, ... on its
last part. A document that opens with its only level-1 heading has that heading as its
title, left out of the paths; the text before the first other heading, and a whole
plain-text document, is the section `<doc-slug>#_top`. opsgraph.knowledge.documents
describes the stored shape.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Literal

Document = dict[str, Any]
Kind = Literal["markdown", "text"]
TOP = "_top"
"""The path of the text before the first (non-title) heading."""

_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


@dataclass(frozen=True, slots=True)
class Section:
    """One section of a document: its heading, its own text (not its subsections')."""

    id: str
    """`<doc-slug>#<path>`, stable while its headings keep their titles."""
    title: str
    level: int
    """The heading's level (1-6); 0 for the `_top` section."""
    text: str
    path: tuple[str, ...]
    """The heading titles from the top of the document down to this one."""

    def to_json(self) -> Document:
        return {"id": self.id, "title": self.title, "level": self.level, "text": self.text,
                "path": list(self.path)}

    @classmethod
    def from_json(cls, data: Document) -> Section:
        return cls(str(data["id"]), str(data["title"]), int(data["level"]),
                   str(data["text"]), tuple(str(p) for p in data["path"]))


def slugify(text: str) -> str:
    """Lowercase ASCII words joined by `-` ("Late cancellations (courts)" →
    "late-cancellations-courts"); "" when nothing is left."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")


def _headings(lines: list[str]) -> list[tuple[int, int, str]]:
    """(line number, level, title) of every ATX heading outside fenced code."""
    found: list[tuple[int, int, str]] = []
    fence: str | None = None
    for n, line in enumerate(lines):
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        match = _HEADING.match(line)
        if match:
            found.append((n, len(match.group(1)), (match.group(2) or "").strip()))
    return found


def _text(lines: list[str]) -> str:
    return "\n".join(lines).strip()


def sections(doc_id: str, text: str, kind: Kind = "markdown",
             title: str | None = None) -> list[Section]:
    """The document's sections in order. `doc_id` is the document's slug (the ids' prefix);
    a plain-text document (`kind="text"`) is one section titled `title` (or the slug)."""
    top_title = title or doc_id
    if kind == "text":
        return [Section(f"{doc_id}#{TOP}", top_title, 0, text.strip(), ())]
    lines = text.splitlines()
    heads = _headings(lines)
    titled = bool(heads) and heads[0][1] == 1 and sum(h[1] == 1 for h in heads) == 1
    out: list[Section] = []
    first_body = heads[0][0] if heads else len(lines)
    if titled:
        top_title = heads[0][2] or top_title
        heads = heads[1:]
        body_start = first_body + 1
        first_body = heads[0][0] if heads else len(lines)
        top_text = _text(lines[body_start:first_body])
    else:
        top_text = _text(lines[:first_body])
    if top_text or not heads:
        out.append(Section(f"{doc_id}#{TOP}", top_title, 0, top_text, ()))
    stack: list[tuple[int, str, str]] = []  # (level, title, unique slug) of open headings
    seen: set[str] = set()
    for k, (line, level, heading) in enumerate(heads):
        while stack and stack[-1][0] >= level:
            stack.pop()
        base = "/".join([s[2] for s in stack] + [slugify(heading) or "section"])
        path, n = base, 1
        while path in seen:
            n += 1
            path = f"{base}-{n}"
        seen.add(path)
        stack.append((level, heading, path.rsplit("/", 1)[-1]))
        end = heads[k + 1][0] if k + 1 < len(heads) else len(lines)
        out.append(Section(f"{doc_id}#{path}", heading, level, _text(lines[line + 1:end]),
                           tuple(s[1] for s in stack)))
    return out


def title_of(slug: str, body: str, kind: Kind) -> str:
    """The document's own title: its first `# ` heading, else the slug in words."""
    if kind == "markdown":
        for _, level, heading in _headings(body.splitlines()):
            if level == 1 and heading:
                return heading
            break
    return slug.replace("-", " ").capitalize()
