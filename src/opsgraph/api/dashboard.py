"""The operations dashboard: a static page and its assets, served by the app.

`GET /` is `static/index.html`; `GET /static/<path>` serves the files under `static/` (CSS
and JavaScript modules, no build step). Only files that ship in the package are served,
each with its content type, an ETag of its content and `Cache-Control: no-cache` (the
browser revalidates and gets a 304 while the file is unchanged, so a new release is seen
at once). The page runs under a Content-Security-Policy that allows only the app's own
scripts, styles and API: nothing is loaded from elsewhere.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files
from importlib.resources.abc import Traversable

from starlette.requests import Request
from starlette.responses import Response

from opsgraph.api.route_doc import ApiRoute, Param
from opsgraph.errors import NotFound

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
}
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'")
PAGE = "index.html"


@dataclass(frozen=True, slots=True)
class Asset:
    """One file of the page: its bytes, content type and ETag."""

    body: bytes
    content_type: str
    etag: str


def _walk(folder: Traversable, prefix: str = "") -> dict[str, Traversable]:
    found: dict[str, Traversable] = {}
    for entry in folder.iterdir():
        name = f"{prefix}{entry.name}"
        if entry.is_dir():
            found.update(_walk(entry, f"{name}/"))
        elif entry.is_file() and any(name.endswith(ext) for ext in CONTENT_TYPES):
            found[name] = entry
    return found


@lru_cache(maxsize=1)
def assets() -> dict[str, Asset]:
    """Every servable file under `static/`, by its path there (read once per process)."""
    out: dict[str, Asset] = {}
    for name, entry in _walk(files("opsgraph.api").joinpath("static")).items():
        body = entry.read_bytes()
        kind = CONTENT_TYPES[name[name.rindex("."):]]
        out[name] = Asset(body, kind, '"' + hashlib.sha256(body).hexdigest()[:32] + '"')
    return out


def _respond(request: Request, asset: Asset) -> Response:
    headers = {"ETag": asset.etag, "Cache-Control": "no-cache",
               "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}
    if asset.content_type.startswith("text/html"):
        headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    if asset.etag in request.headers.get("if-none-match", ""):
        return Response(status_code=304, headers=headers)
    return Response(asset.body, media_type=asset.content_type, headers=headers)


async def index(request: Request) -> Response:
    """`GET /` (the page) and `GET /static/<path>` (its assets); 404 for anything else."""
    path = request.path_params.get("path", PAGE)
    asset = assets().get(path)
    if asset is None:
        raise NotFound(f"static/{path}: no such file of the dashboard")
    return _respond(request, asset)


def _asset_params() -> tuple[Param, ...]:
    return (Param("path", "path", {"type": "string", "enum": sorted(assets())},
                  "The file's path under the dashboard's `static/` folder."),)


ROUTES = (
    ApiRoute("GET", "/", index, "The dashboard (`/#token=<bearer>` signs in)", "open",
             body="html", cached=True),
    ApiRoute("GET", "/static/{path:path}", index,
             "A file of the dashboard (its CSS, scripts, icons)", "open", body="asset",
             cached=True, errors=(404,), params=_asset_params),
)
