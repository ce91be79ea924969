"""Typed settings, read once from the environment.

Every knob opsgraph reads is a field here, documented; a malformed value stops the process
at the first read with the variable named (a misconfiguration is not a caller's bad input).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from opsgraph.errors import ConfigurationError
from opsgraph.secrets import deployment_mongodb_uri, secret_value

DEFAULT_MODEL = "bedrock:us.anthropic.claude-sonnet-4-6"
DEFAULT_LIGHT_MODEL = "bedrock:us.anthropic.claude-haiku-4-5-20251001-v1:0"
TOKEN_ALGORITHMS = ("HS256", "HS384", "HS512")
DEFAULT_LOCAL_MODEL_URLS = ("http://127.0.0.1:11434/v1", "http://127.0.0.1:8080/v1")
"""Ollama's and the llama.cpp server's usual OpenAI-compatible addresses."""


@dataclass(frozen=True, slots=True)
class Settings:
    """Every knob opsgraph reads from the environment."""

    mongodb_uri: str | None
    """`MONGODB_URI`, or the secret `OPSGRAPH_MONGODB_SECRET_ARN` names (a deployment: read
    once, Lambda client options added; see `opsgraph.secrets`): the MongoDB to use; None
    starts the embedded server."""
    home: Path
    """`OPSGRAPH_HOME`: local data (embedded store, caches, local secrets)."""
    database: str
    """`OPSGRAPH_DB`: database name inside MongoDB."""
    model: str
    """`OPSGRAPH_MODEL`: model spec of the default tier (unset: Claude Sonnet on Bedrock,
    unless `opsgraph.models.auto` picks another; see `model_set`)."""
    light_model: str
    """`OPSGRAPH_LIGHT_MODEL`: model spec of the light tier (unset: Claude Haiku on Bedrock)."""
    token_secret: str | None
    """`OPSGRAPH_TOKEN_SECRET`, or the secret `OPSGRAPH_TOKEN_SECRET_ARN` names (read once):
    signs bearer tokens; None → a local secret in `home`."""
    agents_dir: Path
    """`OPSGRAPH_AGENTS`: the registry folder (default: `agents/` of the checkout or image)."""
    default_tenant: str = "demo"
    """`OPSGRAPH_DEFAULT_TENANT`: tenant of anonymous callers without a tenant header."""
    run_model_calls: int = 60
    """`OPSGRAPH_RUN_MODEL_CALLS`: the budget of model calls of one run."""
    model_concurrency: int = 4
    """`OPSGRAPH_MODEL_CONCURRENCY`: model calls in flight at once per process."""
    model_rps: float = 10.0
    """`OPSGRAPH_MODEL_RPS`: requests per second per hosted model instance."""
    apply_lease_s: float = 30.0
    """`OPSGRAPH_APPLY_LEASE_S`: how long an apply or resume claim holds before another
    decision may take it over (after a crash)."""
    thread_lease_s: float = 30.0
    """`OPSGRAPH_THREAD_LEASE_S`: one run at a time per thread; renewed while a run goes on,
    lapses this long after a crash."""
    allowed_models: tuple[str, ...] = ()
    """`OPSGRAPH_ALLOWED_MODELS`: the model specs (comma-separated) a tenant admin may choose
    per agent; unset → the default and light tier models. A tenant picks from this list and
    nothing else, so only the deployment names file-backed specs (`scripted:`, `llamacpp:`).
    Parsed, checked and made canonical by `opsgraph.models.overrides.allowed_models()`."""
    token_algorithm: str = "HS256"
    """`OPSGRAPH_TOKEN_ALGORITHM`: the HMAC algorithm of bearer tokens (HS256, HS384, HS512);
    verification accepts this one only."""
    token_previous_secrets: tuple[str, ...] = ()
    """`OPSGRAPH_TOKEN_PREVIOUS_SECRETS`: comma-separated secrets that signed tokens before the
    current one; their tokens verify (by `kid`) until they expire. Rotation: move the current
    secret here and set a new `OPSGRAPH_TOKEN_SECRET`."""
    tenant_runs: int = 8
    """`OPSGRAPH_TENANT_RUNS`: runs one tenant may have in flight at once, across every
    process on the store; one more is answered 429 with `Retry-After`."""
    user_runs: int = 2
    """`OPSGRAPH_USER_RUNS`: runs one user may have in flight at once, across every process
    on the store."""
    run_slot_lease_s: float = 30.0
    """`OPSGRAPH_RUN_SLOT_LEASE_S`: a run in flight holds its slots (`store.run_slots`) by a
    lease renewed every third of this; a dead process's slots free up this long after it
    stopped renewing."""
    tenant_daily_model_calls: int = 5000
    """`OPSGRAPH_TENANT_DAILY_MODEL_CALLS`: model calls one tenant's HTTP runs may make per UTC
    day; once spent, new runs are answered 429 until midnight UTC."""
    model_set: bool = True
    """Whether `OPSGRAPH_MODEL` is set. Unset, `opsgraph.models.auto` picks the default
    tier's model once per process: Bedrock with AWS credentials, an OpenAI-compatible
    server, else demo mode (the light tier follows unless `OPSGRAPH_LIGHT_MODEL` is set)."""
    light_model_set: bool = True
    """Whether `OPSGRAPH_LIGHT_MODEL` is set."""
    local_model_urls: tuple[str, ...] = DEFAULT_LOCAL_MODEL_URLS
    """`OPSGRAPH_LOCAL_MODEL_URLS`: OpenAI-compatible servers on this machine that
    auto-selection asks for their models (comma-separated base URLs; `off` asks none). Default:
    Ollama's and the llama.cpp server's usual addresses. Never asked on Lambda."""
    log_format: str = "text"
    """`OPSGRAPH_LOG_FORMAT`: `text` (readable; the default locally) or `json` (one JSON
    object a line with tenant, thread, run and request ids; the default on Lambda)."""
    log_level: str = "INFO"
    """`OPSGRAPH_LOG_LEVEL`: the least severe level written (`DEBUG`, `INFO`, `WARNING`,
    `ERROR`; default `INFO`)."""
    traces: str = "off"
    """`OPSGRAPH_TRACES`: `off` (the default locally: every span a no-op) or `xray` (the
    default on Lambda): spans request → run → node → task → model call / tool → store, sent
    by the OpenTelemetry SDK through ADOT's exporter to the X-Ray endpoint Lambda runs beside
    the function (`AWS_XRAY_DAEMON_ADDRESS`). Needs the `lambda` extra (the image has it)."""
    metrics: bool = False
    """`OPSGRAPH_METRICS`: `on` writes CloudWatch embedded-metric lines to stdout (run
    latency and outcome, model latency and throttles, 429s, lost leases, waiting cards);
    default on on Lambda, off locally."""
    few_shot: bool = True
    """`OPSGRAPH_FEW_SHOT`: `on` (default) or `off`. Off, the nightly few-shot promotion
    promotes nothing and prompts get no worked examples, for every tenant (a tenant turns
    them off for itself with `few_shot: false` on its tenants document)."""
    context_tokens: int = 8192
    """`OPSGRAPH_CONTEXT_TOKENS`: the context window, in tokens, of a model whose window
    opsgraph does not know (`openai:`, `llamacpp:`, `scripted:` specs; Claude models are
    known: 200,000). Every prompt is trimmed to fit it (`opsgraph.engine.context_budget`);
    set it to the server's context size (llama.cpp `--ctx-size`, Ollama `num_ctx`)."""
    direct_proposals: bool = True
    """`OPSGRAPH_DIRECT_PROPOSALS`: `on` (default) or `off`. On, an action agent whose
    write tool has every required argument resolved by code from the request (members,
    resources, events, times, amounts, contacts) proposes it with no model turn (on the
    held-out suite with the local model: 6 and 4 of 12 write requests in the right card
    with it, 3 of 12 without, evals/results)."""


def _default_agents_dir() -> Path:
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "agents").is_dir() and (parent / "pyproject.toml").exists():
            return parent / "agents"
    return Path.cwd() / "agents"


def _positive(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if value <= 0:
        raise ConfigurationError(f"{name}: must be a positive number, got {raw!r}")
    return value


def _from_secret(env: Mapping[str, str], plain: str, arn_variable: str) -> str | None:
    """`plain`'s value, or the Secrets Manager secret `arn_variable` names (read once per
    process); setting both is a misconfiguration."""
    value, arn = env.get(plain) or None, env.get(arn_variable, "").strip()
    if not arn:
        return value
    if value is not None:
        raise ConfigurationError(f"{plain} and {arn_variable} are both set: keep the ARN only")

    return secret_value(arn, arn_variable)


def _mongodb_uri(env: Mapping[str, str]) -> str | None:
    uri = _from_secret(env, "MONGODB_URI", "OPSGRAPH_MONGODB_SECRET_ARN")
    if uri is None or not env.get("OPSGRAPH_MONGODB_SECRET_ARN", "").strip():
        return uri

    return deployment_mongodb_uri(uri, "OPSGRAPH_MONGODB_SECRET_ARN")


def _algorithm(raw: str) -> str:
    name = raw.strip().upper() or "HS256"
    if name not in TOKEN_ALGORITHMS:
        raise ConfigurationError(f"OPSGRAPH_TOKEN_ALGORITHM: {raw!r} is not one of "
                                 f"{', '.join(TOKEN_ALGORITHMS)}")
    return name


def _local_model_urls(raw: str | None) -> tuple[str, ...]:
    if raw is None:
        return DEFAULT_LOCAL_MODEL_URLS
    if raw.strip().lower() == "off":
        return ()
    urls = tuple(u.strip().rstrip("/") for u in raw.split(",") if u.strip())
    for url in urls:
        if not url.startswith(("http://", "https://")):
            raise ConfigurationError(f"OPSGRAPH_LOCAL_MODEL_URLS: {url!r} is not an http(s) "
                                     "URL (or set it to off)")
    return urls


def _switch(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name, "").strip().lower()
    if not raw:
        return default
    if raw not in ("on", "off", "true", "false", "1", "0"):
        raise ConfigurationError(f"{name}: must be on or off, got {raw!r}")
    return raw in ("on", "true", "1")


LOG_FORMATS = ("text", "json")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
TRACES = ("off", "xray")


def _choice(env: Mapping[str, str], name: str, allowed: tuple[str, ...], default: str,
            fold: bool = True) -> str:
    raw = env.get(name, "").strip()
    value = (raw.lower() if fold else raw.upper()) or default
    if value not in allowed:
        raise ConfigurationError(f"{name}: must be one of {', '.join(allowed)}, got {raw!r}")
    return value


def load_settings() -> Settings:
    """Read the environment now (tests call this after changing it)."""
    env = os.environ
    on_lambda = bool(env.get("AWS_LAMBDA_FUNCTION_NAME"))
    home = Path(env.get("OPSGRAPH_HOME") or Path.home() / ".local/share/opsgraph").expanduser()
    return Settings(
        mongodb_uri=_mongodb_uri(env),
        home=home,
        database=env.get("OPSGRAPH_DB", "opsgraph"),
        model=env.get("OPSGRAPH_MODEL", "").strip() or DEFAULT_MODEL,
        light_model=env.get("OPSGRAPH_LIGHT_MODEL", "").strip() or DEFAULT_LIGHT_MODEL,
        token_secret=_from_secret(env, "OPSGRAPH_TOKEN_SECRET", "OPSGRAPH_TOKEN_SECRET_ARN"),
        agents_dir=Path(env.get("OPSGRAPH_AGENTS") or _default_agents_dir()),
        default_tenant=(env.get("OPSGRAPH_DEFAULT_TENANT") or "demo").strip(),
        run_model_calls=int(_positive(env, "OPSGRAPH_RUN_MODEL_CALLS", 60)),
        model_concurrency=int(_positive(env, "OPSGRAPH_MODEL_CONCURRENCY", 4)),
        model_rps=_positive(env, "OPSGRAPH_MODEL_RPS", 10.0),
        apply_lease_s=_positive(env, "OPSGRAPH_APPLY_LEASE_S", 30.0),
        thread_lease_s=_positive(env, "OPSGRAPH_THREAD_LEASE_S", 30.0),
        allowed_models=tuple(s.strip() for s in env.get("OPSGRAPH_ALLOWED_MODELS", "").split(",")
                             if s.strip()),
        token_algorithm=_algorithm(env.get("OPSGRAPH_TOKEN_ALGORITHM", "")),
        token_previous_secrets=tuple(
            s.strip() for s in env.get("OPSGRAPH_TOKEN_PREVIOUS_SECRETS", "").split(",")
            if s.strip()),
        tenant_runs=int(_positive(env, "OPSGRAPH_TENANT_RUNS", 8)),
        user_runs=int(_positive(env, "OPSGRAPH_USER_RUNS", 2)),
        run_slot_lease_s=_positive(env, "OPSGRAPH_RUN_SLOT_LEASE_S", 30.0),
        tenant_daily_model_calls=int(_positive(env, "OPSGRAPH_TENANT_DAILY_MODEL_CALLS", 5000)),
        model_set=bool(env.get("OPSGRAPH_MODEL", "").strip()),
        light_model_set=bool(env.get("OPSGRAPH_LIGHT_MODEL", "").strip()),
        local_model_urls=_local_model_urls(env.get("OPSGRAPH_LOCAL_MODEL_URLS")),
        few_shot=_switch(env, "OPSGRAPH_FEW_SHOT", True),
        log_format=_choice(env, "OPSGRAPH_LOG_FORMAT", LOG_FORMATS,
                           "json" if on_lambda else "text"),
        log_level=_choice(env, "OPSGRAPH_LOG_LEVEL", LOG_LEVELS, "INFO", fold=False),
        traces=_choice(env, "OPSGRAPH_TRACES", TRACES, "xray" if on_lambda else "off"),
        metrics=_switch(env, "OPSGRAPH_METRICS", on_lambda),
        context_tokens=int(_positive(env, "OPSGRAPH_CONTEXT_TOKENS", 8192)),
        direct_proposals=_switch(env, "OPSGRAPH_DIRECT_PROPOSALS", True),
    )


def cors_origins(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """`OPSGRAPH_CORS_ORIGINS`: comma-separated browser origins (`https://app.example`) whose
    pages may call the API (Agent Inbox, Agent Chat UI, an AG-UI app served elsewhere);
    unset → none. Read apart from `Settings`, as the app is built: nothing else is needed
    (no secret is fetched) to know it."""
    raw = (os.environ if env is None else env).get("OPSGRAPH_CORS_ORIGINS", "")
    origins = tuple(o.strip().rstrip("/") for o in raw.split(",") if o.strip())
    for origin in origins:
        if origin != "*" and not re.fullmatch(r"https?://[^/\s]+", origin):
            raise ConfigurationError(f"OPSGRAPH_CORS_ORIGINS: {origin!r} is not an origin "
                                     "(scheme://host[:port], or *)")
    return origins


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once."""
    return load_settings()


@contextmanager
def environment_variable(name: str, value: str) -> Iterator[None]:
    """`name=value` in this process for the block, as it was afterwards (the eval's scratch
    database, the bench's model-call cap). Callers re-read settings on both sides."""
    saved = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = saved
