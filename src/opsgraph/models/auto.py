"""Which model answers when `OPSGRAPH_MODEL` is unset: decided once per process, and said.

In order, the first that holds:

- `configured`: `OPSGRAPH_MODEL` is set (it always wins; no probing at all);
- `openai`: `OPENAI_BASE_URL` is set and lists a model at `GET {base}/models`;
- `bedrock`: AWS credentials resolve through botocore's own chain (environment, profiles and
  their files, SSO, container credentials; the EC2 instance role only on an EC2 machine, so
  elsewhere nothing waits for the instance metadata service). Claude on Bedrock;
- `openai`: an OpenAI-compatible server on this machine answers (`OPSGRAPH_LOCAL_MODEL_URLS`:
  Ollama's 127.0.0.1:11434/v1, the llama.cpp server's 127.0.0.1:8080/v1), with its first
  model; never probed on Lambda. `OPENAI_BASE_URL` is set to it for this process;
- `demo`: nothing reachable. Only the example requests are answered, each by its scripted
  model (`opsgraph.models.demo`); the tiers' spec is `DEMO_SPEC`, which never builds: any
  other request ends with a `demo_mode` error naming the settings to make.

An explicitly set `OPENAI_BASE_URL` comes before ambient AWS credentials: it is the more
deliberate of the two. `opsgraph serve` prints `ModelChoice.line()`; `GET /v1/info` shows it.
"""

from __future__ import annotations

import json
import os
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from opsgraph.errors import RunAborted
from opsgraph.models.bedrock import bedrock_region
from opsgraph.settings import DEFAULT_LIGHT_MODEL, DEFAULT_MODEL, Settings, get_settings

Mode = Literal["bedrock", "openai", "demo", "configured"]

DEMO_DIR: Final = Path(__file__).resolve().parents[1] / "demo"
DEMO_SPEC: Final = f"scripted:{DEMO_DIR / 'examples.yaml'}"
"""The tiers' model in demo mode: it names the examples' index and never builds."""
OPENAI_PROBE_TIMEOUT_S: Final = 3.0
LOCAL_PROBE_TIMEOUT_S: Final = 0.5
EC2_IMDS_TIMEOUT_S: Final = 1.0
HOW_TO_CHOOSE: Final = ("set OPSGRAPH_MODEL (bedrock:<model-id>, or openai:<model> with "
                        "OPENAI_BASE_URL), set OPENAI_BASE_URL to an OpenAI-compatible server, "
                        "or provide AWS credentials for Bedrock, and restart opsgraph")


class DemoMode(RunAborted):
    """A request that is none of the demo's examples, with no model to answer it."""

    status = 503
    code = "demo_mode"


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """The models of the two tiers, how they were chosen, and why, in words."""

    mode: Mode
    model: str
    light_model: str
    message: str

    def line(self) -> str:
        """One line for the log at start."""
        return f"model: {self.mode}: {self.message}"


def demo_mode_message() -> str:
    """What a request outside the examples is told in demo mode."""
    return ("opsgraph is in demo mode: no model is configured or reachable, so only the "
            "example requests are answered (GET /v1/info lists them). For anything else, "
            f"{HOW_TO_CHOOSE}.")


def openai_models(base_url: str, timeout_s: float, api_key: str | None = None) -> list[str]:
    """The model ids an OpenAI-compatible server lists at `GET {base_url}/models`, in its
    order; OSError (or ValueError for an answer that is not such a list) when it does not."""
    request = urllib.request.Request(f"{base_url.rstrip('/')}/models",
                                     headers={"Accept": "application/json"})
    if api_key:
        request.add_header("Authorization", f"Bearer {api_key}")
    # a server on this machine is asked directly, never through a proxy
    opener = (urllib.request.build_opener(urllib.request.ProxyHandler({}))
              if _loopback(base_url) else urllib.request.build_opener())
    with opener.open(request, timeout=timeout_s) as response:
        body = json.loads(response.read(1_000_000))
    rows = body.get("data") if isinstance(body, dict) else None
    if not isinstance(rows, list):
        raise ValueError("the answer has no `data` list")
    ids = [str(row["id"]) for row in rows if isinstance(row, dict) and row.get("id")]
    if not ids:
        raise ValueError("it lists no model")
    return ids


def _loopback(url: str) -> bool:
    host = urllib.parse.urlsplit(url).hostname or ""
    return host in ("localhost", "::1") or host.startswith("127.")


def on_ec2() -> bool:
    """Whether this machine says it is an EC2 instance (read locally, no network)."""
    for path, marker in (("/sys/devices/virtual/dmi/id/sys_vendor", "amazon"),
                         ("/sys/hypervisor/uuid", "ec2")):
        try:
            if Path(path).read_text().strip().lower().startswith(marker):
                return True
        except OSError:
            continue
    return False


def aws_credentials() -> str | None:
    """How botocore finds AWS credentials here (`env`, `shared-credentials-file`, `sso`,
    ...), None when it finds none. botocore's chain as it is, less the instance metadata
    service off EC2 (elsewhere its 1 s timeout would be spent on every start)."""
    import botocore.session  # heavy: botocore (cold start)
    from botocore.exceptions import BotoCoreError  # heavy: botocore (cold start)

    session = botocore.session.Session()
    try:
        resolver = session.get_component("credential_provider")
        if on_ec2():
            session.set_config_variable("metadata_service_timeout", EC2_IMDS_TIMEOUT_S)
        else:
            resolver.remove("iam-role")
        credentials = resolver.load_credentials()
    except BotoCoreError:
        return None
    return str(credentials.method) if credentials is not None else None


def _openai_from_env(env: Mapping[str, str]) -> tuple[ModelChoice | None, str]:
    base = env.get("OPENAI_BASE_URL", "").strip()
    if not base:
        return None, ""
    try:
        models = openai_models(base, OPENAI_PROBE_TIMEOUT_S, env.get("OPENAI_API_KEY"))
    except (OSError, ValueError) as exc:
        return None, f"OPENAI_BASE_URL {base} did not list its models: {_reason(exc)}"
    spec = f"openai:{models[0]}"
    return ModelChoice("openai", spec, spec,
                       f"{spec} at OPENAI_BASE_URL {base}, the first model it lists; set "
                       "OPSGRAPH_MODEL to choose another."), ""


def _bedrock() -> ModelChoice | None:
    method = aws_credentials()
    if method is None:
        return None

    return ModelChoice("bedrock", DEFAULT_MODEL, DEFAULT_LIGHT_MODEL,
                       f"{DEFAULT_MODEL} in {bedrock_region()}, AWS credentials found "
                       f"({method}); set OPSGRAPH_MODEL to choose another.")


def _local(urls: tuple[str, ...]) -> ModelChoice | None:
    for url in urls:
        try:
            models = openai_models(url, LOCAL_PROBE_TIMEOUT_S)
        except (OSError, ValueError):
            continue
        os.environ["OPENAI_BASE_URL"] = url  # what `openai:` specs are built against
        spec = f"openai:{models[0]}"
        return ModelChoice("openai", spec, spec,
                           f"{spec} on the local server at {url}, the first model it lists; "
                           "set OPSGRAPH_MODEL to choose another.")
    return None


def _reason(exc: BaseException) -> str:
    if isinstance(exc, urllib.error.HTTPError):
        return f"HTTP {exc.code}"
    if isinstance(exc, urllib.error.URLError):
        return str(exc.reason)
    return str(exc) or type(exc).__name__


def choose(settings: Settings, env: Mapping[str, str]) -> ModelChoice:
    """Decide now (`model_choice()` decides once and remembers)."""
    if settings.model_set:
        light = settings.light_model
        return ModelChoice("configured", settings.model, light,
                           f"{settings.model}, as OPSGRAPH_MODEL says.")
    choice, why_not = _openai_from_env(env)
    choice = choice or _bedrock()
    if choice is None and not env.get("AWS_LAMBDA_FUNCTION_NAME"):
        choice = _local(settings.local_model_urls)
    if choice is None:
        message = ("Demo mode: no model is configured or reachable" +
                   (f" ({why_not})" if why_not else "") + ", so the example requests are "
                   f"answered by scripted models. To use a model, {HOW_TO_CHOOSE}.")
        choice = ModelChoice("demo", DEMO_SPEC, DEMO_SPEC, message)
    if settings.light_model_set:
        choice = ModelChoice(choice.mode, choice.model, settings.light_model, choice.message)
    return choice


_lock = threading.Lock()
_decided: tuple[Settings, ModelChoice] | None = None


def model_choice() -> ModelChoice:
    """This process's choice, made on first use for the current settings."""
    global _decided
    settings = get_settings()
    with _lock:
        if _decided is None or _decided[0] is not settings:
            _decided = (settings, choose(settings, os.environ))
        return _decided[1]


def reset_model_choice() -> None:
    """Decide again on next use (tests that change the environment)."""
    global _decided
    with _lock:
        _decided = None
