# opsgraph as a container-image AWS Lambda (see docs/deploy.md).
#
#   docker build -t opsgraph .                  # the streaming entry (default, last stage):
#                                               # uvicorn behind the Lambda Web Adapter
#   docker build --target mangum -t opsgraph .  # the buffered alternative: mangum under the
#                                               # base image's runtime client (API Gateway)
#
# No secret is baked in: the MongoDB URI and the token secret are read from Secrets Manager
# at init (OPSGRAPH_MONGODB_SECRET_ARN, OPSGRAPH_TOKEN_SECRET_ARN, set by template.yaml).

ARG PYTHON_IMAGE=public.ecr.aws/lambda/python:3.12
ARG ADAPTER_IMAGE=public.ecr.aws/awsguru/aws-lambda-adapter:1.0.0

FROM ${ADAPTER_IMAGE} AS adapter

# --- build: the project from its own pyproject.toml (no dev extras), byte-compiled --------
FROM ${PYTHON_IMAGE} AS build
WORKDIR /build
COPY pyproject.toml README.md THIRD_PARTY_NOTICES.md ./
COPY src ./src
# /var/task is read-only in Lambda: without .pyc files every cold start compiles the whole
# import graph again (~4 s instead of ~1 s). unchecked-hash: the .pyc is used as it is,
# whatever the source files' timestamps become in the image.
# the `lambda` extra: the OpenTelemetry SDK and ADOT's exporter to Lambda's X-Ray endpoint
# (DL3013: every version is pinned in pyproject.toml, the extra's included)
# hadolint ignore=DL3013
RUN pip install --no-cache-dir --no-compile --target /build/task ".[lambda]" \
 && python -m compileall -q -j 0 --invalidation-mode unchecked-hash /build/task
# The embedder's int8 model, derived here once (~5 s) rather than in every new instance's
# /tmp (opsgraph.knowledge.quantized_model); OPSGRAPH_MODELS below points at it.
RUN PYTHONPATH=/build/task python -m opsgraph.knowledge.quantized_model /build/task/models

# --- runtime: what both entries share ------------------------------------------------------
FROM ${PYTHON_IMAGE} AS runtime
ENV PYTHONPATH=/var/task \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    OPSGRAPH_HOME=/tmp/opsgraph \
    OPSGRAPH_MODELS=/var/task/models \
    OPSGRAPH_AGENTS=/var/task/agents
COPY --from=build /build/task /var/task
COPY agents /var/task/agents
WORKDIR /var/task
# Lambda runs the function as its own unprivileged user; locally, the image does not run
# as root either.
USER 65534:65534

# --- the buffered alternative: mangum under the base image's runtime client --------------
FROM runtime AS mangum
CMD ["opsgraph.api.lambda_handler.handler"]

# --- the primary entry: uvicorn behind the Lambda Web Adapter (streams SSE) --------------
FROM runtime AS stream
COPY --from=adapter /lambda-adapter /opt/extensions/lambda-adapter
ENV AWS_LWA_PORT=8080 \
    AWS_LWA_READINESS_CHECK_PATH=/health \
    AWS_LWA_PASS_THROUGH_PATH=/events \
    AWS_LWA_INVOKE_MODE=response_stream
ENTRYPOINT ["python3", "-m", "opsgraph.api.lambda_web"]
