"""The offline checks of make deploy-check, and what the template promises the app."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from opsgraph.api.lambda_events import JOBS
from opsgraph.settings import DEFAULT_LIGHT_MODEL, DEFAULT_MODEL
from tests.deploy.validate import (
    ROOT,
    check_all,
    check_template,
    hadolint,
    load_template,
    sam_transform,
)

TEMPLATE = ROOT / "template.yaml"
JOBS_TO_BUILD: tuple[str, ...] = ()
"""Scheduled by the template but not in the router yet: none (every job is built)."""


@pytest.fixture(scope="module")
def transformed() -> dict[str, Any]:
    return sam_transform(load_template(TEMPLATE))


def test_the_dockerfile_and_the_template_are_clean() -> None:
    assert check_all() == []


def test_an_invalid_invoke_mode_is_caught_only_after_the_transform(tmp_path: Path) -> None:
    bad = tmp_path / "template.yaml"
    bad.write_text(TEMPLATE.read_text().replace("InvokeMode: RESPONSE_STREAM",
                                                "InvokeMode: STREAMING"))
    problems = check_template(bad)
    assert any("STREAMING" in p for p in problems), problems
    assert all("(transformed)" in p or "E3030" in p for p in problems), problems


def test_hadolint_finds_an_unpinned_image(tmp_path: Path) -> None:
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text("FROM ubuntu\nRUN apt-get update && apt-get install -y curl\n")
    assert any("DL3006" in p for p in hadolint(dockerfile))


def _functions(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {name: r["Properties"] for name, r in template["Resources"].items()
            if r["Type"] == "AWS::Lambda::Function"}


def test_the_api_streams_and_the_events_function_buffers(transformed: dict[str, Any]) -> None:
    url = next(r["Properties"] for r in transformed["Resources"].values()
               if r["Type"] == "AWS::Lambda::Url")
    assert url["InvokeMode"] == "RESPONSE_STREAM" and url["TargetFunctionArn"] == {
        "Ref": "ApiFunction"}
    modes = {name: props["Environment"]["Variables"]["AWS_LWA_INVOKE_MODE"]
             for name, props in _functions(transformed).items()}
    assert modes == {"ApiFunction": "response_stream", "EventsFunction": "buffered"}
    mapping = next(r["Properties"] for r in transformed["Resources"].values()
                   if r["Type"] == "AWS::Lambda::EventSourceMapping")
    assert mapping["FunctionName"] == {"Ref": "EventsFunction"}
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]


def test_secrets_come_from_secrets_manager_only(transformed: dict[str, Any]) -> None:
    for props in _functions(transformed).values():
        variables = props["Environment"]["Variables"]
        assert "MONGODB_URI" not in variables and "OPSGRAPH_TOKEN_SECRET" not in variables
        assert {"OPSGRAPH_MONGODB_SECRET_ARN", "OPSGRAPH_TOKEN_SECRET_ARN"} <= set(variables)
    assert "SECRET" not in (ROOT / "Dockerfile").read_text().replace("SECRET_ARN", "")


def test_no_role_reaches_beyond_its_resources(transformed: dict[str, Any]) -> None:
    """Only Lambda's basic logging policy and X-Ray's write-only one (tracing; X-Ray's
    actions name no resources) are AWS-managed; every statement of ours names its
    resources."""
    for name, resource in transformed["Resources"].items():
        props = resource["Properties"]
        if resource["Type"] == "AWS::IAM::Role":
            managed = [a for a in props["ManagedPolicyArns"] if isinstance(a, str)]
            assert sorted(managed) == [
                "arn:aws:iam::aws:policy/AWSXrayWriteOnlyAccess",
                "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"], name
        if resource["Type"] == "AWS::IAM::ManagedPolicy":
            for statement in props["PolicyDocument"]["Statement"]:
                assert "*" not in json.dumps(statement["Action"]), name
                assert statement["Resource"] != "*", name


def test_schedules_name_jobs_and_the_model_defaults_are_the_apps() -> None:
    template = load_template(TEMPLATE)
    inputs = [json.loads(event["Properties"]["Input"])
              for r in template["Resources"].values() if r["Type"] == "AWS::Serverless::Function"
              for event in r["Properties"].get("Events", {}).values()
              if event["Type"] == "Schedule"]
    assert {"keep_warm": True} in inputs
    assert {i["job"] for i in inputs if "job" in i} == {*JOBS, *JOBS_TO_BUILD}
    params = template["Parameters"]
    assert f"bedrock:{params['DefaultModelId']['Default']}" == DEFAULT_MODEL
    assert f"bedrock:{params['LightModelId']['Default']}" == DEFAULT_LIGHT_MODEL


def _of_type(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {name: r["Properties"] for name, r in template["Resources"].items()
            if r["Type"] == kind}


def test_both_functions_trace_and_log_to_groups_with_a_retention(
        transformed: dict[str, Any]) -> None:
    functions = _functions(transformed)
    groups = _of_type(transformed, "AWS::Logs::LogGroup")
    assert set(functions) == {"ApiFunction", "EventsFunction"}
    for props in functions.values():
        assert props["TracingConfig"] == {"Mode": "Active"}
        group = props["LoggingConfig"]["LogGroup"]["Ref"]
        assert groups[group]["RetentionInDays"] == {"Ref": "LogRetentionDays"}
        assert props["Environment"]["Variables"]["OPSGRAPH_LOG_FORMAT"] == "json"
        assert props["Environment"]["Variables"]["OPSGRAPH_TRACES"] == "xray"


def test_the_alarms_watch_the_dead_letters_errors_throttles_and_waiting_cards(
        transformed: dict[str, Any]) -> None:
    alarms = _of_type(transformed, "AWS::CloudWatch::Alarm")
    watched = {(a.get("Namespace"), a.get("MetricName")) for a in alarms.values()}
    assert {("AWS/SQS", "ApproximateNumberOfMessagesVisible"), ("AWS/Lambda", "Throttles"),
            ("opsgraph", "ModelThrottles"), ("opsgraph", "OldestCardAgeSeconds")} <= watched
    rate = next(a for a in alarms.values() if "Metrics" in a)
    assert {m["MetricStat"]["Metric"]["MetricName"] for m in rate["Metrics"]
            if "MetricStat" in m} == {"Errors", "Invocations"}
    dlq = next(a for a in alarms.values() if a.get("Namespace") == "AWS/SQS")
    assert dlq["Dimensions"][0]["Value"] == {
        "Fn::GetAtt": ["InboundEmailDeadLetterQueue", "QueueName"]}
    for alarm in alarms.values():
        assert alarm["AlarmActions"] == [{"Ref": "AlarmTopic"}]
        assert alarm["TreatMissingData"] == "notBreaching"


def test_the_app_writes_the_metrics_the_alarms_read() -> None:
    from opsgraph.telemetry import metrics

    table = metrics.__doc__ or ""
    for name in ("ModelThrottles", "OldestCardAgeSeconds"):
        assert f"`{name}`" in table
    assert metrics.NAMESPACE == "opsgraph"
