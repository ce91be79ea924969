"""`GET /openapi.json` of a real server process: a valid OpenAPI 3.1 document (checked
against the specification's own schema by schemathesis's loader) describing every route
of the app, with schemas generated from the request and response models."""

from __future__ import annotations

import re

import httpx
import schemathesis

from opsgraph.api.app import ROUTE_TABLE, ROUTES
from opsgraph.api.openapi import openapi_document
from opsgraph.api.request_models import RunRequest
from opsgraph.engine.events import EVENT_NAMES


def test_the_document_describes_every_route_of_the_app() -> None:
    # Starlette's `{path:path}` is OpenAPI's `{path}`
    served = {(method, re.sub(r"\{(\w+):\w+\}", r"{\1}", route.path)) for route in ROUTES
              for method in route.methods or () if method != "HEAD"}
    documented = {(method.upper(), path) for path, operations in
                  openapi_document(ROUTE_TABLE)["paths"].items() for method in operations}
    assert documented == served


def test_the_served_document_is_valid_openapi_3_1(http: httpx.Client) -> None:
    response = http.get("/openapi.json")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    document = response.json()
    assert document["openapi"] == "3.1.0"
    schemathesis.openapi.from_dict(document).validate()  # raises on an invalid document

    schemas = document["components"]["schemas"]
    assert schemas["RunRequest"] == RunRequest.model_json_schema(
        ref_template="#/components/schemas/{model}")
    assert schemas["RunRequest"]["additionalProperties"] is False
    assert schemas["RunRequest"]["properties"]["message"]["maxLength"] == 8000

    runs = document["paths"]["/v1/runs"]["post"]
    assert runs["security"] == [{}, {"bearer": []}]
    assert runs["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/RunRequest"}
    stream = runs["responses"]["200"]["content"]["text/event-stream"]["schema"]["oneOf"]
    assert {event["properties"]["event"]["const"] for event in stream} == EVENT_NAMES
    assert {"400", "401", "404", "413", "422", "429"} <= set(runs["responses"])
    assert "Retry-After" in runs["responses"]["429"]["headers"]

    models = document["paths"]["/v1/tenant/models"]
    assert models["get"]["security"] == models["put"]["security"] == [{"bearer": []}]
    assert models["get"]["responses"]["200"] == models["put"]["responses"]["200"]
    assert document["paths"]["/health"]["get"]["security"] == []
