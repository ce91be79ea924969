"""MCP for an admin's agent at `/mcp/admin`: the user link's tools plus what it takes to
improve the tenant's harness — edit, validate, test, activate, roll back, read the answer
log — and to manage its knowledge documents and agent models.

Admins only: any other caller (a visitor included) is 403 before an MCP message is read;
a bad token is 401, as on the user link. Each admin tool is a thin wrapper over the
function the CLI and the HTTP routes call (`harness.versions`, `harness.validate`,
`evals.harness_tests`, `engine.answer_log`, `knowledge.admin`, `models.overrides`); its
arguments are checked by a pydantic model that is also its input schema, and an opsgraph
error comes back as an MCP tool error with its code and message (`{error: {code, message,
detail?}}`: a harness's validation problems ride in `detail.problems`).

Activation over MCP: a version with failing tests is refused unless `force`, and `force`
itself is refused unless the tenant allows its agents that (`harness_agent_may_force: true`
on the tenant's document) — otherwise overriding failing tests stays a person's choice,
made with `opsgraph harness activate N --force`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from opsgraph.api.bodies import validated
from opsgraph.api.db import db
from opsgraph.api.mcp_admin_tenant import (
    CatalogueKeyArg,
    CataloguePutArgs,
    CatalogueTypeArg,
    SettingsArgs,
    catalogue,
    catalogue_objects,
    catalogue_put,
    catalogue_remove,
    settings_get,
    settings_set,
)
from opsgraph.api.mcp_spec import Writes, admin_hints, server_version
from opsgraph.api.mcp_user import (
    McpUser,
    call_user_link_tool,
    error_result,
    list_user_tools,
    request_principal,
)
from opsgraph.api.principals import require_roles
from opsgraph.api.read_only import read_only_error
from opsgraph.api.request_models import KnowledgeDocumentRequest, TenantModelsRequest
from opsgraph.engine.answer_log import answer_log as log
from opsgraph.errors import Forbidden, OpsgraphError, Unauthorized
from opsgraph.knowledge import admin
from opsgraph.lazy_build import LazyModel
from opsgraph.models.overrides import model_settings, set_overrides
from opsgraph.principal import Principal, Role
from opsgraph.registry.loader import get_registry
from opsgraph.store.scope import TenantScope

if TYPE_CHECKING:
    from mcp.server import Server, ServerRequestContext
    from mcp_types import (
        CallToolRequestParams,
        CallToolResult,
        ListToolsResult,
        PaginatedRequestParams,
    )

MAY_FORCE = "harness_agent_may_force"
"""The tenant setting that lets an agent force an activation over failing tests."""


class _Args(LazyModel):
    # strict: a JSON `true` is not version 1, nor "1" a number (a caller's mistake is named)
    model_config = ConfigDict(extra="forbid", strict=True)


class NoArgs(_Args):
    """No arguments."""


class VersionArg(_Args):
    version: int | None = Field(None, ge=0, description="A harness version (0: the built-in "
                                                        "harness).")


class DocArgs(_Args):
    doc: dict[str, Any] = Field(description="A harness version document (harness_schema).")


class SetArgs(DocArgs):
    note: str = Field("", max_length=500, description="Why this version (shown in the list).")


class ActivateArgs(_Args):
    version: int = Field(ge=0, description="The version to activate.")
    force: bool = Field(False, description="Activate even if its tests fail (refused unless "
                                           "the tenant lets agents force).")


class AnswerLogArgs(_Args):
    limit: int = Field(20, ge=1, le=100, description="Runs per page.")
    before: str | None = Field(None, description="The `cursor` of the last run of the "
                                                 "previous page.")


class DocumentAddArgs(KnowledgeDocumentRequest):
    slug: str = Field(description="The document's id (lowercase letters, digits, '-').")


class SlugArg(_Args):
    slug: str = Field(description="The document's id.")


def _scope(principal: Principal) -> TenantScope:
    return TenantScope.of(principal)


def harness_schema(principal: Principal, args: NoArgs) -> dict[str, Any]:
    from opsgraph.harness.spec import HarnessDoc  # heavy: opsgraph.harness (cold start)

    return HarnessDoc.model_json_schema(by_alias=True)


def harness_get(principal: Principal, args: VersionArg) -> dict[str, Any]:
    from opsgraph.harness import versions  # heavy: opsgraph.harness (cold start)

    return versions.get(_scope(principal), args.version)


def harness_set(principal: Principal, args: SetArgs) -> dict[str, Any]:
    from opsgraph.harness import versions  # heavy: opsgraph.harness (cold start)

    version, changes = versions.save(_scope(principal), args.doc, actor=principal.user_id,
                                     note=args.note)
    return {"version": version, "changes": changes}


def harness_validate(principal: Principal, args: DocArgs) -> dict[str, Any]:
    # heavy: opsgraph.harness (cold start)
    from opsgraph.harness.validate import HarnessInvalid, validate

    try:
        validate(args.doc)
    except HarnessInvalid as exc:
        return {"valid": False, "problems": exc.problems}
    return {"valid": True, "problems": []}


def harness_test(principal: Principal, args: VersionArg) -> dict[str, Any]:
    """The version's tests (the active one by default), the report kept beside it — as
    `opsgraph harness test` does."""
    from opsgraph.evals.harness_tests import run_tests  # heavy: opsgraph.evals (cold start)
    from opsgraph.harness import versions  # heavy: opsgraph.harness (cold start)

    scope = _scope(principal)
    version = versions.active(scope)[0] if args.version is None else args.version
    report: dict[str, Any] = run_tests(scope, version, versions.load(scope, version))
    versions.record_test(scope, version, report)
    return report


def harness_activate(principal: Principal, args: ActivateArgs) -> dict[str, Any]:
    from opsgraph.evals.harness_tests import activate_checked  # heavy: opsgraph.evals (cold start)

    scope = _scope(principal)
    if args.force and (scope.tenant() or {}).get(MAY_FORCE) is not True:
        raise Forbidden(f"force: activating a version whose tests fail is a person's choice "
                        f"here ('opsgraph harness activate {args.version} --force'); the "
                        f"tenant does not let agents force it ({MAY_FORCE} is off)")
    done: dict[str, Any] = activate_checked(scope, args.version, actor=principal.user_id,
                                            force=args.force)
    return done


def harness_rollback(principal: Principal, args: NoArgs) -> dict[str, Any]:
    from opsgraph.harness import versions  # heavy: opsgraph.harness (cold start)

    return versions.rollback(_scope(principal), actor=principal.user_id)


def harness_versions(principal: Principal, args: NoArgs) -> dict[str, Any]:
    from opsgraph.harness import versions  # heavy: opsgraph.harness (cold start)

    return {"versions": versions.list_versions(_scope(principal))}


def answer_log(principal: Principal, args: AnswerLogArgs) -> dict[str, Any]:
    return log(_scope(principal), limit=args.limit, before=args.before)


def documents_list(principal: Principal, args: NoArgs) -> dict[str, Any]:
    return admin.list_documents(db(), principal.tenant_id)


def documents_add(principal: Principal, args: DocumentAddArgs) -> dict[str, Any]:
    return admin.put_document(db(), principal.tenant_id, args.slug, args.body,
                              kind=args.kind, title=args.title)


def documents_remove(principal: Principal, args: SlugArg) -> dict[str, Any]:
    return admin.remove_document(db(), principal.tenant_id, args.slug)


def models_get(principal: Principal, args: NoArgs) -> dict[str, Any]:
    return model_settings(_scope(principal))


def models_set(principal: Principal, args: TenantModelsRequest) -> dict[str, Any]:
    scope = _scope(principal)
    set_overrides(scope, args.models, set(get_registry().agents), principal.user_id)
    return model_settings(scope)


@dataclass(frozen=True)
class AdminTool:
    """One admin tool: what it does, its arguments (schema and check) and its function."""

    description: str
    args: type[BaseModel]
    run: Callable[[Principal, Any], dict[str, Any]]
    writes: Writes | None = None
    """How it changes the tenant's data (None: it only reads). A read-only caller is refused
    it, in `call_admin_tool`; its MCP annotations say so."""

    def schema(self) -> dict[str, Any]:
        return self.args.model_json_schema()


# how the admin tools that write change the tenant (their MCP annotations)
SAVES = Writes(destructive=False, idempotent=False)  # a new harness version each call
TESTS = Writes(destructive=False, idempotent=True)  # a version's test report, replaced
REPLACES = Writes(destructive=True, idempotent=True)  # state set to what the call says
ROLLS_BACK = Writes(destructive=True, idempotent=False)  # each call steps one back

ADMIN_TOOLS: dict[str, AdminTool] = {
    "harness_schema": AdminTool("The JSON schema of a harness version document.", NoArgs,
                                harness_schema),
    "harness_get": AdminTool("A harness version's document and metadata (the active one by "
                             "default).", VersionArg, harness_get),
    "harness_set": AdminTool("Validate and save a new harness version (not activated); "
                             "returns its number and its changes from the active version.",
                             SetArgs, harness_set, writes=SAVES),
    "harness_validate": AdminTool("Check a harness document without saving it: `{valid, "
                                  "problems: [{path, message}]}`.", DocArgs, harness_validate),
    "harness_test": AdminTool("Run a version's own tests (default: the active version); "
                              "the report is kept beside the version.", VersionArg,
                              harness_test, writes=TESTS),
    "harness_activate": AdminTool("Run a version's tests and activate it if they pass; "
                                  "`force` overrides failing tests only where the tenant "
                                  "allows agents to.", ActivateArgs, harness_activate,
                                  writes=REPLACES),
    "harness_rollback": AdminTool("Re-activate the version that was active before the "
                                  "current one.", NoArgs, harness_rollback, writes=ROLLS_BACK),
    "harness_versions": AdminTool("Every harness version with which is active and its last "
                                  "test result.", NoArgs, harness_versions),
    "answer_log": AdminTool("The tenant's recent runs, newest first: request, harness steps "
                            "ran, tools, model calls, sources, outcome.", AnswerLogArgs,
                            answer_log),
    "documents_list": AdminTool("The tenant's knowledge documents and knowledge version.",
                                NoArgs, documents_list),
    "documents_add": AdminTool("Add or replace a knowledge document (Markdown or text, at "
                               "most 1 MiB).", DocumentAddArgs, documents_add, writes=REPLACES),
    "documents_remove": AdminTool("Remove a knowledge document.", SlugArg, documents_remove,
                                  writes=REPLACES),
    "models_get": AdminTool("The per-agent model overrides and the models allowed.", NoArgs,
                            models_get),
    "models_set": AdminTool("Replace every per-agent model override.", TenantModelsRequest,
                            models_set, writes=REPLACES),
    "settings_get": AdminTool("The tenant's settings: capability mode, off-topic reply, "
                              "modules, whether an agent may force an activation.", NoArgs,
                              settings_get),
    "settings_set": AdminTool("Set the capability mode, the off-topic reply and the modules "
                              "(whether an agent may force an activation is a person's "
                              "choice: not here).", SettingsArgs, settings_set, writes=REPLACES),
    "catalogue": AdminTool("The agents of the registry as the admin may use them: domain, "
                           "kind, operations, roles, model.", NoArgs, catalogue),
    "catalogue_objects": AdminTool("The tenant's catalogue: resources, classes, events, "
                                   "plans, products, price lists.", CatalogueTypeArg,
                                   catalogue_objects),
    "catalogue_put": AdminTool("Add or replace a catalogue object (every field checked; "
                               "audited).", CataloguePutArgs, catalogue_put, writes=REPLACES),
    "catalogue_remove": AdminTool("Remove a catalogue object (audited).", CatalogueKeyArg,
                                  catalogue_remove, writes=REPLACES),
}


def call_admin_tool(principal: Principal, name: str, arguments: dict[str, Any],
                    ) -> dict[str, Any]:
    """One admin tool's result; its arguments checked first (422 naming each field). A
    tool that writes is refused to a read-only caller here, for every such tool."""
    tool = ADMIN_TOOLS[name]
    if tool.writes and principal.read_only:
        raise read_only_error(principal.channel.value, f"the {name} tool")
    return tool.run(principal, validated(arguments, tool.args))


@lru_cache(maxsize=1)
def admin_server() -> Server[Any]:
    """The low-level MCP server of the admin link."""
    import mcp_types as types  # heavy: mcp_types (cold start)
    from mcp.server import Server  # heavy: mcp (cold start)

    async def list_tools(ctx: ServerRequestContext[Any, Any],
                         params: PaginatedRequestParams | None) -> ListToolsResult:
        listed = await list_user_tools(request_principal(ctx))
        listed += [types.Tool(name=name, description=tool.description,
                              input_schema=tool.schema(), annotations=admin_hints(tool.writes))
                   for name, tool in ADMIN_TOOLS.items()]
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: ServerRequestContext[Any, Any],
                        params: CallToolRequestParams) -> CallToolResult:
        principal = request_principal(ctx)
        args = dict(params.arguments or {})
        if params.name not in ADMIN_TOOLS:
            return await call_user_link_tool(principal, params.name, args)
        try:
            out = await run_in_threadpool(call_admin_tool, principal, params.name, args)
        except OpsgraphError as exc:
            return error_result(exc)
        body: dict[str, Any] = json.loads(json.dumps(out, default=str))
        return types.CallToolResult(
            content=[types.TextContent(text=json.dumps(body, ensure_ascii=False))],
            structured_content=body)

    return Server("opsgraph-admin", version=server_version(), instructions=(
        "opsgraph, for a tenant's admin: everything of the user link, plus the tenant's "
        "harness (harness_schema, harness_get, harness_set, harness_validate, harness_test, "
        "harness_activate, harness_rollback, harness_versions), the answer log, knowledge "
        "documents and agent models. Improve the harness in a loop: read the answer log, "
        "set a version (its change list comes back), test it, activate it."),
        on_list_tools=list_tools, on_call_tool=call_tool)


class McpAdmin(McpUser):
    """The ASGI app mounted at `/mcp/admin`: the user link's, for admins only."""

    def admit(self, principal: Principal) -> None:
        if principal.is_visitor:  # no credentials at all: 401, so a client asks for some
            raise Unauthorized("the admin MCP link needs an admin's bearer token")
        require_roles(principal, Role.ADMIN, action="the admin MCP link")

    def server(self) -> Server[Any]:
        return admin_server()
