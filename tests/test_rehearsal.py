"""A deploy rehearsal: template.yaml translated by the SAM translator, deployed into moto's CloudFormation,
and both functions run against the stack's own table and secret with the credentials of their own roles,
IAM enforced. A call the template does not grant fails this test.

What `sam deploy` does, and how far moto (5.2) follows:

1. Package: each local `CodeUri`/`ContentUri` is zipped into an S3 bucket (moto's) and replaced by its
   s3:// location, as `sam package` does (without `sam build`: moto runs no code, it only keeps the zip).
2. Transform: `samtranslator` turns the SAM template into plain CloudFormation, offline: its managed
   policy loader maps names to ARNs from moto's copy of AWS's managed policies. The parameters have
   realistic values (`PARAMETERS`); the others keep their defaults.
3. Create the stack in moto's CloudFormation. It has no model of these resource types (it would skip
   them with a warning), so the rehearsal takes them out of the template and makes each one with its own
   API call, from the same properties with their intrinsics resolved (`MADE_BY_API`;
   `test_moto_cannot_create_exactly_the_types_the_rehearsal_makes_itself` keeps that list exact, so that
   a resource type moto skips cannot join the template unseen):
   - AWS::ApiGatewayV2::Api, the HTTP API: CreateApi before the stack; after it, ReimportApi of the
     translated OpenAPI body (routes, Lambda integrations, FailOnWarnings as translated). The stack gets
     the API's id as a template parameter of the same logical name, so every `Ref: HttpApi` (the Lambda
     permissions' source ARNs, the outputs) resolves to the id, as in CloudFormation.
   - AWS::ApiGatewayV2::Stage, the `$default` stage with its throttling: CreateStage.
   - AWS::CloudWatch::Alarm, with or without metric math: PutMetricAlarm. `Fn::GetAtt <alarm>.Arn` (in
     the dashboard's body) becomes what it returns, arn:<partition>:cloudwatch:<region>:<account>:alarm:<name>.
   - AWS::Lambda::EventInvokeConfig, the sweep's retries and event age: PutFunctionEventInvokeConfig.
   - AWS::SNS::Subscription (only with AlarmEmail; the dashboard test's stack has one): Subscribe.
   moto's CloudFormation also drops some properties of the types it does create:
   - put back with their own API: a table's `TimeToLiveSpecification` (UpdateTimeToLive) and
     `PointInTimeRecoverySpecification` (UpdateContinuousBackups), a role's `ManagedPolicyArns`
     (AttachRolePolicy, each policy from moto's copy of AWS's managed policies), a function's `Layers`
     (UpdateFunctionConfiguration);
   - not rehearsed: a function's `Architectures`, `TracingConfig`, `LoggingConfig` and tags (moto keeps
     no LoggingConfig and takes no TracingConfig after creation; its defaults, x86_64 and PassThrough,
     are what the template asks for by default; tests/test_template.py reads the logging
     configuration), and the table's encryption (moto reads `SSESpecification` in the API's shape,
     `Enabled`, where CloudFormation's is `SSEEnabled`).
   Two slips of moto's CloudFormation are mended in the fixture `aws`: it keeps a role's inline policies
   as objects, where its policy evaluation reads JSON text, and it names a layer version by a property
   "LayerVersion" instead of LayerName.
4. The SecureString `/pager/<stack>/secrets`, which the stack does not create (docs/deploy.md, "The secrets by hand"), is written by
   the test as the administrator, before IAM is enforced.

Each function then runs as Lambda runs it. Its environment is its deployed configuration
(GetFunctionConfiguration: the template's Globals and its own variables, translated and resolved) and
what Lambda adds: the region, the function's name, and the credentials of the function's role. These
are the role's own: the test plays Lambda's part and assumes the role the stack created
(sts:AssumeRole, as the administrator, before enforcement; moto does not check the trust policy's
service principal). moto evaluates IAM policies once `INITIAL_NO_AUTH_ACTION_COUNT` requests have passed
(`moto.core.enable_iam_authentication()` makes it 0), for an IAM user's access keys and for the
temporary credentials of an assumed role: it checks the SigV4 signature, then the role's inline and
attached policies. For DynamoDB and SSM moto evaluates only a statement's Action, though: it asks with
the resource "*", which no statement scoped to an ARN matches. The rehearsal tells moto the resource of
each such request (`_resource_of`: the table's ARN from TableName, or from the tables a BatchGetItem or
TransactWriteItems names, the parameter's from Name), so that Action and Resource are both evaluated, as
AWS does for these calls. A TransactWriteItems is evaluated as AWS evaluates it, action by action: its
Put, Update and ConditionCheck as PutItem, UpdateItem and ConditionCheckItem ("Using IAM with DynamoDB
transactions"), where moto would ask for an action "TransactWriteItems" no policy names. It records every evaluation
(`EVALUATIONS`: which call was allowed or refused, to whom, on what) and the access key of every request
(`REQUESTS`): each request a function makes with its role's credentials must have been evaluated. (moto
answers a refused call to a JSON API such as DynamoDB's with IAM's XML error, which botocore reads as
the code 403, where AWS says AccessDeniedException.)

The secret is read by the real settings reader (`pager.settings.read_secret_with_powertools`: Powertools
Parameters through boto3), and the table is the stack's (moto's) through pager's own boto3 client. Only
the HTTP session of the GitHub and Telegram clients belongs to the fake world (`pager_world.http.session_for`
with FakeGitHub and FakeTelegram at the API roots the settings name); anything else on it is refused, so
no request leaves the machine. The SecureString is encrypted with the account's aws/ssm key, whose key
policy lets whoever may read the parameter decrypt it through SSM: the template rightly grants no
kms:Decrypt, and moto checks none.

What moto cannot show: the outputs' execute-api URLs carry the id of moto's HTTP API, not an endpoint that
answers; moto runs neither the schedules nor the API's routes (the test calls the handlers with the
events they would send), and evaluates no alarm.
"""

from __future__ import annotations

import copy
import functools
import importlib.util
import io
import json
import os
import re
import time
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

import boto3
import pytest
import requests
import yaml
from moto import mock_aws
from moto.core import DEFAULT_ACCOUNT_ID, enable_iam_authentication
from requests.adapters import BaseAdapter

from pager import bootstrap
from pager.permissions import needed_permissions
from pager_world import cases
from pager_world.clock import Clock
from pager_world.events import LambdaContext, github_event, scheduled_event
from pager_world.github import FakeGitHub
from pager_world.http import session_for
from pager_world.payloads import INSTALLATION
from pager_world.telegram import FakeTelegram
from pager_world.world import BOT_TOKEN, REPO, TELEGRAM_SECRET, WEBHOOK_SECRET

ROOT = Path(__file__).resolve().parents[1]
REGION = "us-east-1"
STACK = "pager-rehearsal"
PARAMETERS = {
    "GitHubAppId": "12345",
    "GitHubAppSlug": "pager-test",
    "ControlRepository": "maintainer/pager",
    "TelegramChatId": "-1001",
}
# The outputs docs/deploy.md tells the user to use ("The guided deploy's prompts"; DashboardUrl only with
# WithDashboard=true).
DOCUMENTED_OUTPUTS = {"GitHubWebhookUrl", "TelegramWebhookUrl", "SecretName", "TableName", "WebhookLogGroupName",
                  "SweepLogGroupName", "AlarmTopicArn"}

# The parameters that make every condition of the template true.
EVERY_CONDITION = {"AlarmEmail": "maintainer@example.com", "WithDashboard": "true"}

# The resource types moto's CloudFormation cannot create, and the API call that makes each one instead
# (service, operation); the HTTP API is also created, empty, before the stack (module docstring).
MADE_BY_API: dict[str, tuple[str, str]] = {
    "AWS::ApiGatewayV2::Api": ("apigatewayv2", "reimport_api"),
    "AWS::ApiGatewayV2::Stage": ("apigatewayv2", "create_stage"),
    "AWS::CloudWatch::Alarm": ("cloudwatch", "put_metric_alarm"),
    "AWS::Lambda::EventInvokeConfig": ("lambda", "put_function_event_invoke_config"),
    "AWS::SNS::Subscription": ("sns", "subscribe"),
}


_ADMIN: dict[str, Any] = {}  # the administrator's session and clients, for the fixture `aws`'s life


def client(service: str) -> Any:
    """A client of the administrator who deploys and inspects (IAM is enforced only for the functions)."""
    if service not in _ADMIN:
        if "session" not in _ADMIN:
            _ADMIN["session"] = boto3.session.Session(aws_access_key_id="testing", aws_secret_access_key="testing",
                                                      region_name=REGION)
        _ADMIN[service] = _ADMIN["session"].client(service)
    return _ADMIN[service]


# -- the template -----------------------------------------------------------------------------------------


class _CfnLoader(yaml.SafeLoader):
    """YAML with CloudFormation's short tags (!Ref, !Sub, !GetAtt, ...) read as their long forms."""


def _intrinsic(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> dict[str, Any]:
    if isinstance(node, yaml.ScalarNode):
        value: Any = loader.construct_scalar(node)
        if suffix == "GetAtt":
            value = value.split(".", 1)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)
    return {"Ref" if suffix == "Ref" else f"Fn::{suffix}": value}


_CfnLoader.add_multi_constructor("!", _intrinsic)


@functools.lru_cache(maxsize=1)
def _template_text() -> dict[str, Any]:
    return yaml.load((ROOT / "template.yaml").read_text(), Loader=_CfnLoader)


def sam_template() -> dict[str, Any]:
    return copy.deepcopy(_template_text())


def without_action(template: dict[str, Any], function: str, action: str) -> dict[str, Any]:
    """The template with `action` taken out of the function's policies."""
    changed = copy.deepcopy(template)
    found = False
    for policy in changed["Resources"][function]["Properties"]["Policies"]:
        for statement in policy.get("Statement", []):
            actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
            found = found or action in actions
            statement["Action"] = [a for a in actions if a != action]
    assert found, f"{function} is not granted {action}"
    return changed


CODE_LOCATIONS = {"AWS::Serverless::Function": "CodeUri", "AWS::Serverless::LayerVersion": "ContentUri"}


def package(template: dict[str, Any], bucket: str) -> dict[str, Any]:
    """`sam package`: each local code location zipped into the bucket and replaced by its s3:// URI."""
    packaged = copy.deepcopy(template)
    for name, resource in packaged["Resources"].items():
        prop = CODE_LOCATIONS.get(resource["Type"])
        if prop is None:
            continue
        folder = ROOT / resource["Properties"][prop]
        archive = io.BytesIO()
        with zipfile.ZipFile(archive, "w") as zipped:
            for path in sorted(folder.rglob("*")):
                if path.is_file() and "__pycache__" not in path.parts:
                    zipped.write(path, path.relative_to(folder).as_posix())
        client("s3").put_object(Bucket=bucket, Key=f"{name}.zip", Body=archive.getvalue())
        resource["Properties"][prop] = f"s3://{bucket}/{name}.zip"
    return packaged


@functools.lru_cache(maxsize=1)
def aws_managed_policies() -> dict[str, dict[str, Any]]:
    """AWS's managed policies as moto carries them (name -> path, document, ...)."""
    import moto.iam.models

    return json.loads(moto.iam.models.aws_managed_policies_data)


def managed_policy_arn(name: str) -> str:
    return f"arn:aws:iam::aws:policy{aws_managed_policies()[name]['Path']}{name}"


class _PolicyLoader:
    """The translation's managed policy loader (name -> ARN), from moto's copy: no call to AWS."""

    def load(self) -> dict[str, str]:
        return {name: managed_policy_arn(name) for name in aws_managed_policies()}


def translate(template: dict[str, Any], parameters: dict[str, str]) -> dict[str, Any]:
    from samtranslator.translator.transform import transform

    return transform(copy.deepcopy(template), dict(parameters), _PolicyLoader())


# -- intrinsics, for what the rehearsal makes itself ------------------------------------------------------


_NO_VALUE = object()


class Resolver:
    """Ref, Fn::GetAtt, Fn::Sub, Fn::If and conditions, for the properties of a resource made by its API;
    any other function is refused."""

    def __init__(self, template: dict[str, Any], parameters: dict[str, str], stack: str) -> None:
        self.template = template
        self.values: dict[str, Any] = {
            "AWS::StackName": stack, "AWS::Region": REGION, "AWS::AccountId": DEFAULT_ACCOUNT_ID,
            "AWS::Partition": "aws", "AWS::URLSuffix": "amazonaws.com", "AWS::NoValue": _NO_VALUE,
        }
        for name, declared in template.get("Parameters", {}).items():
            value = parameters.get(name, declared.get("Default"))
            if declared.get("Type") == "Number" and value is not None:
                value = int(value) if float(value).is_integer() else float(value)
            self.values[name] = value
        self.attributes: dict[tuple[str, str], Any] = {}

    def __call__(self, value: Any) -> Any:
        if isinstance(value, dict) and len(value) == 1:
            (key, argument), = value.items()
            if key == "Ref":
                return self.values[argument]
            if key == "Fn::GetAtt":
                return self.attributes[tuple(argument)]
            if key == "Fn::Sub":
                text, names = (argument, {}) if isinstance(argument, str) else argument
                names = {k: self(v) for k, v in names.items()}
                return re.sub(r"\$\{([^!}][^}]*)\}", lambda m: str(self._named(m[1], names)), text)
            if key == "Fn::If":
                condition, then, otherwise = argument
                return self(then if self.condition(condition) else otherwise)
            assert not key.startswith("Fn::"), f"the rehearsal resolves no {key}"
        if isinstance(value, dict):
            return {k: v for k, v in ((k, self(v)) for k, v in value.items()) if v is not _NO_VALUE}
        if isinstance(value, list):
            return [v for v in (self(v) for v in value) if v is not _NO_VALUE]
        return value

    def _named(self, name: str, names: dict[str, Any]) -> Any:
        if name in names:
            return names[name]
        if "." in name and name not in self.values:
            return self.attributes[tuple(name.split(".", 1))]
        return self.values[name]

    def condition(self, name: str | None) -> bool:
        return name is None or bool(self._truth(self.template["Conditions"][name]))

    def _truth(self, expression: Any) -> Any:
        if isinstance(expression, dict) and len(expression) == 1:
            (key, argument), = expression.items()
            if key == "Condition":
                return self.condition(argument)
            if key == "Fn::Equals":
                left, right = (self._truth(a) for a in argument)
                return str(left) == str(right)
            if key == "Fn::Not":
                return not self._truth(argument[0])
            if key == "Fn::And":
                return all(self._truth(a) for a in argument)
            if key == "Fn::Or":
                return any(self._truth(a) for a in argument)
        return self(expression)


# -- the deployment ---------------------------------------------------------------------------------------


@dataclass
class Deployment:
    stack: str
    template: dict[str, Any]  # as translated
    outputs: dict[str, str]
    physical: dict[str, str]  # logical id -> physical id (the HTTP API's: its id)
    functions: dict[str, dict[str, Any]] = field(default_factory=dict)  # logical id -> its configuration
    made: dict[str, dict[str, Any]] = field(default_factory=dict)  # logical id -> properties, of those made by API

    def alarm_names(self) -> list[str]:
        return [self.made[name]["AlarmName"] for name in self.resources("AWS::CloudWatch::Alarm")]

    def resources(self, kind: str) -> dict[str, dict[str, Any]]:
        return {name: r for name, r in self.template["Resources"].items() if r["Type"] == kind}

    @property
    def table_arn(self) -> str:
        return client("dynamodb").describe_table(TableName=self.outputs["TableName"])["Table"]["TableArn"]

    @property
    def secret_arn(self) -> str:
        return f"arn:aws:ssm:{REGION}:{DEFAULT_ACCOUNT_ID}:parameter{self.outputs['SecretName']}"

    def items(self) -> list[dict[str, Any]]:
        return client("dynamodb").scan(TableName=self.outputs["TableName"])["Items"]


def _alarm_arn(alarm: dict[str, Any]) -> str:
    """What `Fn::GetAtt <alarm>.Arn` returns, as a Sub string."""
    name = alarm["Properties"]["AlarmName"]
    name = name["Fn::Sub"] if isinstance(name, dict) else name
    assert isinstance(name, str), "an alarm named by a Sub string or a literal"
    return "arn:${AWS::Partition}:cloudwatch:${AWS::Region}:${AWS::AccountId}:alarm:" + name


def _alarm_arns_inlined(value: Any, alarms: dict[str, str]) -> Any:
    """`Fn::GetAtt <alarm>.Arn`, in a Sub string or on its own, as the ARN it returns."""
    if isinstance(value, dict):
        if set(value) == {"Fn::GetAtt"} and value["Fn::GetAtt"][0] in alarms:
            return {"Fn::Sub": alarms[value["Fn::GetAtt"][0]]}
        if set(value) == {"Fn::Sub"}:
            argument = value["Fn::Sub"]
            text, names = (argument, None) if isinstance(argument, str) else argument
            for alarm, arn in alarms.items():
                text = text.replace(f"${{{alarm}.Arn}}", arn)
            return {"Fn::Sub": text if names is None else [text, _alarm_arns_inlined(names, alarms)]}
        return {k: _alarm_arns_inlined(v, alarms) for k, v in value.items()}
    if isinstance(value, list):
        return [_alarm_arns_inlined(v, alarms) for v in value]
    return value


def deploy(sam: dict[str, Any], stack: str, parameters: dict[str, str] = PARAMETERS) -> Deployment:
    """Package, translate and deploy the template as `stack`, making what moto's CloudFormation cannot."""
    bucket = f"{stack}-artifacts"
    client("s3").create_bucket(Bucket=bucket)
    translated = translate(package(sam, bucket), parameters)
    resolve = Resolver(translated, parameters, stack)

    # what moto's CloudFormation cannot create comes out of its template; the HTTP API's id goes in as a parameter
    made = {name: r for name, r in translated["Resources"].items() if r["Type"] in MADE_BY_API}
    for_moto = copy.deepcopy(translated)
    for name in made:
        del for_moto["Resources"][name]
    alarms = {name: _alarm_arn(r) for name, r in made.items() if r["Type"] == "AWS::CloudWatch::Alarm"}
    for_moto = _alarm_arns_inlined(for_moto, alarms)
    apis = {name: client("apigatewayv2").create_api(Name=resolve(r["Properties"]["Body"]["info"]["title"]),
                                                    ProtocolType="HTTP")["ApiId"]
            for name, r in made.items() if r["Type"] == "AWS::ApiGatewayV2::Api"}
    for name, api_id in apis.items():
        for_moto["Parameters"][name] = {"Type": "String", "Description": "The HTTP API (made by the rehearsal)"}
        resolve.values[name] = api_id

    cloudformation = client("cloudformation")
    cloudformation.create_stack(
        StackName=stack, TemplateBody=json.dumps(for_moto), Capabilities=["CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND"],
        Parameters=[{"ParameterKey": k, "ParameterValue": v} for k, v in {**parameters, **apis}.items()],
    )
    [described] = cloudformation.describe_stacks(StackName=stack)["Stacks"]
    assert described["StackStatus"] == "CREATE_COMPLETE", described.get("StackStatusReason")
    physical = {r["LogicalResourceId"]: r.get("PhysicalResourceId")
                for r in cloudformation.describe_stack_resources(StackName=stack)["StackResources"]
                if "LogicalResourceId" in r}  # moto lists a resource whose condition is false without one
    physical.update(apis)
    resolve.values.update({name: value for name, value in physical.items() if value})
    outputs = {o["OutputKey"]: o.get("OutputValue") for o in described.get("Outputs", [])}
    deployment = Deployment(stack, translated, outputs, physical)

    lam = client("lambda")
    for name in deployment.resources("AWS::Lambda::Function"):
        resolve.attributes[(name, "Arn")] = lam.get_function_configuration(FunctionName=physical[name])["FunctionArn"]
    for name, layer in deployment.resources("AWS::Lambda::LayerVersion").items():
        [latest, *_] = lam.list_layer_versions(LayerName=resolve(layer["Properties"]["LayerName"]))["LayerVersions"]
        resolve.values[name] = latest["LayerVersionArn"]  # moto gives a stack's layer version no physical id

    # what moto's CloudFormation drops: a table's TTL and point-in-time recovery, a role's managed policies,
    # a function's layers
    for name, table in deployment.resources("AWS::DynamoDB::Table").items():
        properties = resolve(table["Properties"])
        if "TimeToLiveSpecification" in properties:
            client("dynamodb").update_time_to_live(
                TableName=physical[name], TimeToLiveSpecification=properties["TimeToLiveSpecification"])
        if "PointInTimeRecoverySpecification" in properties:
            client("dynamodb").update_continuous_backups(
                TableName=physical[name],
                PointInTimeRecoverySpecification=properties["PointInTimeRecoverySpecification"])
    for name, role in deployment.resources("AWS::IAM::Role").items():
        for arn in resolve(role["Properties"].get("ManagedPolicyArns", [])):
            _aws_managed_policy(arn)
            client("iam").attach_role_policy(RoleName=physical[name], PolicyArn=arn)
    for name, function in deployment.resources("AWS::Lambda::Function").items():
        if function["Properties"].get("Layers"):
            layers = resolve(function["Properties"]["Layers"])
            lam.update_function_configuration(FunctionName=physical[name], Layers=layers)
        deployment.functions[name] = lam.get_function_configuration(FunctionName=physical[name])

    # the resources moto's CloudFormation cannot create, each made by its own API
    for name, resource in made.items():
        if not resolve.condition(resource.get("Condition")):
            continue
        service, operation = MADE_BY_API[resource["Type"]]
        properties = deployment.made[name] = resolve(resource["Properties"])
        if resource["Type"] == "AWS::ApiGatewayV2::Api":
            properties = {"ApiId": apis[name], "Body": json.dumps(properties["Body"]),
                          "FailOnWarnings": properties.get("FailOnWarnings", False)}
        getattr(client(service), operation)(**properties)
    return deployment


def _aws_managed_policy(arn: str) -> None:
    """An AWS managed policy in moto's IAM, from its copy (moto loads all 1,500 of them only when told to,
    which takes most of a second)."""
    from moto.iam.models import AWSManagedPolicy, iam_backends

    backend = iam_backends[DEFAULT_ACCOUNT_ID]["aws"]
    if arn not in backend.managed_policies:
        name = arn.rsplit("/", 1)[-1]
        policy = AWSManagedPolicy.from_data(name, DEFAULT_ACCOUNT_ID, backend.region_name, aws_managed_policies()[name])
        assert policy.arn == arn, (policy.arn, arn)
        backend.managed_policies[arn] = policy


def write_secrets(deployment: Deployment, private_key: str) -> None:
    """The secrets, which the stack does not create: `pager setup` writes them (docs/deploy.md, "The secrets by hand")."""
    client("ssm").put_parameter(Name=deployment.outputs["SecretName"], Type="SecureString", Value=json.dumps({
        "GITHUB_PRIVATE_KEY": private_key, "GITHUB_WEBHOOK_SECRET": WEBHOOK_SECRET,
        "TELEGRAM_BOT_TOKEN": BOT_TOKEN, "TELEGRAM_WEBHOOK_SECRET": TELEGRAM_SECRET}))


# -- IAM as moto evaluates it, with the resource of each request --------------------------------------------


@dataclass(frozen=True)
class Evaluation:
    principal: str
    action: str
    resource: str
    allowed: bool


EVALUATIONS: list[Evaluation] = []
REQUESTS: list[str] = []  # the access key of each request moto answered


def _access_key(request: Any) -> str:
    authorization = request.headers.get("Authorization") or b""
    if isinstance(authorization, bytes):
        authorization = authorization.decode()
    return authorization.partition("Credential=")[2].partition("/")[0]


def _resource_of(service: str) -> Callable[[Any], str]:
    """The ARN a DynamoDB or SSM request acts on, for moto's policy evaluation (which asks with "*" otherwise):
    the table a DynamoDB request names (BatchGetItem's and TransactWriteItems' one table). A call that names no
    table or parameter, or several (BatchWriteItem, GetParameters), is still asked with "*": such a call would
    need its resources taught here first."""

    def resource(handler: Any) -> str:
        prefix = f"arn:aws:{service}:{handler.region}:{handler.current_account}"
        if service == "dynamodb":
            tables = {handler._get_param("TableName"), *(handler._get_param("RequestItems") or {}),
                      *(next(iter(action.values()))["TableName"] for action in handler._get_param("TransactItems") or [])}
            tables.discard(None)
            table = tables.pop() if len(tables) == 1 else None
            return "*" if not table else table if table.startswith("arn:") else f"{prefix}:table/{table}"
        name = handler._get_param("Name")
        return "*" if not name else name if name.startswith("arn:") else f"{prefix}:parameter/{name.lstrip('/')}"

    return resource


@pytest.fixture(scope="module")
def aws() -> Iterator[None]:
    """moto, with each DynamoDB and SSM request's resource for the policy evaluation, a record of every
    request and every evaluation, and two slips of its CloudFormation mended (module docstring)."""
    import moto.iam.models
    from moto.awslambda.models import LayerVersion
    from moto.core.botocore_stubber import BotocoreStubber
    from moto.dynamodb.responses import DynamoHandler
    from moto.iam.access_control import IAMRequestBase
    from moto.ssm.responses import SimpleSystemManagerResponse

    evaluate = IAMRequestBase.check_action_permitted

    def one(request: Any, resource: str) -> None:
        try:
            evaluate(request, resource)
        except Exception:
            EVALUATIONS.append(Evaluation(request._access_key.arn, request._action, resource, False))
            raise
        EVALUATIONS.append(Evaluation(request._access_key.arn, request._action, resource, True))

    def recorded(request: Any, resource: str) -> None:
        if request._action != "dynamodb:TransactWriteItems":
            return one(request, resource)
        # "Using IAM with DynamoDB transactions": Put, Update and Delete are governed by PutItem, UpdateItem and
        # DeleteItem, ConditionCheck by ConditionCheckItem; each of the transaction's actions is evaluated so.
        kinds = {"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem", "ConditionCheck": "ConditionCheckItem"}
        actions = sorted({kinds[kind] for action in json.loads(request._body)["TransactItems"] for kind in action})
        try:
            for action in actions:
                request._action = f"dynamodb:{action}"
                one(request, resource)
        finally:
            request._action = "dynamodb:TransactWriteItems"

    answer = BotocoreStubber.process_request

    def counted(stubber: Any, request: Any) -> Any:
        REQUESTS.append(_access_key(request))
        return answer(stubber, request)

    put_policy = moto.iam.models.Role.put_policy
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AWS_DEFAULT_REGION", REGION)  # the region of the deploy, which the SAM translator reads
        patch.setattr(DynamoHandler, "_determine_resource", _resource_of("dynamodb"), raising=False)
        patch.setattr(SimpleSystemManagerResponse, "_determine_resource", _resource_of("ssm"), raising=False)
        patch.setattr(IAMRequestBase, "check_action_permitted", recorded)
        patch.setattr(BotocoreStubber, "process_request", counted)
        patch.setattr(moto.iam.models.Role, "put_policy", lambda role, name, document: put_policy(
            role, name, document if isinstance(document, str) else json.dumps(document)))
        patch.setattr(LayerVersion, "cloudformation_name_type", staticmethod(lambda: "LayerName"))
        with mock_aws():
            try:
                yield
            finally:
                _ADMIN.clear()


@pytest.fixture(scope="module")
def stack(aws, private_key_pem) -> Deployment:
    deployment = deploy(sam_template(), STACK)
    write_secrets(deployment, private_key_pem)
    return deployment


@pytest.fixture(scope="module")
def denied_stack(aws, private_key_pem) -> Deployment:
    """The same stack, but for one action less: dynamodb:PutItem, taken from the webhook function's policy."""
    deployment = deploy(without_action(sam_template(), "WebhookFunction", "dynamodb:PutItem"), f"{STACK}-denied")
    write_secrets(deployment, private_key_pem)
    return deployment


# -- the functions, run as Lambda runs them ---------------------------------------------------------------


def _load_app(function: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"rehearsal_{function}_app", ROOT / "functions" / function / "app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HANDLERS = {"WebhookFunction": _load_app("webhook").lambda_handler, "SweepFunction": _load_app("sweep").lambda_handler}


class _Refused(BaseAdapter):
    """Any host but GitHub's and Telegram's API: refused, so that no request leaves the machine."""

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        raise requests.ConnectionError(f"the rehearsal lets no request leave the machine: {request.url}")

    def close(self) -> None:
        pass


@dataclass
class Fakes:
    github: FakeGitHub
    telegram: FakeTelegram
    session: requests.Session


def fakes_for(deployment: Deployment) -> Fakes:
    """GitHub and Telegram at the API roots the deployed settings name (by default, the real ones)."""
    variables = deployment.functions["WebhookFunction"]["Environment"]["Variables"]
    github_api = variables.get("GITHUB_API_URL") or "https://api.github.com"
    telegram_api = variables.get("TELEGRAM_API_URL") or "https://api.telegram.org"
    github = FakeGitHub(clock=time.time, api_url=github_api)
    github.app_id = variables["GITHUB_APP_ID"]
    github.installations.update({REPO: INSTALLATION, variables["CONTROL_REPOSITORY"]: INSTALLATION})
    github.installation_permissions[INSTALLATION] = needed_permissions()  # what the README has the maintainer accept
    telegram = FakeTelegram(clock=Clock(time.time()))
    telegram.add_chat(variables["TELEGRAM_CHAT_ID"], "group")  # the maintainer's chat, the bot in it
    session = session_for({github_api: github, telegram_api: telegram})
    for scheme in ("http://", "https://"):
        session.mount(scheme, _Refused())
    return Fakes(github, telegram, session)


# pager's settings and Lambda's own variables: a container has only what its configuration and Lambda set
CONTAINER = ("AWS_", "PAGER_", "GITHUB_", "TELEGRAM_", "SWEEP_", "RELEASE_", "CONTROL_", "POWERTOOLS_", "LOG_LEVEL")


class Invocation:
    """A function of a deployment in its own container, as Lambda runs it: its configuration's environment,
    its role's credentials, IAM enforced. `start()` is the cold start; calling it invokes the handler."""

    def __init__(self, deployment: Deployment, function: str, fakes: Fakes) -> None:
        self.function, self.fakes = function, fakes
        self.configuration = deployment.functions[function]
        self.name = self.configuration["FunctionName"]
        role = self.configuration["Role"]
        self.principal = f"arn:aws:sts::{DEFAULT_ACCOUNT_ID}:assumed-role/{role.split('/')[-1]}/{self.name}"
        self._patch = pytest.MonkeyPatch()

    def __enter__(self) -> Self:
        try:
            self._enter()
        except BaseException:
            self._patch.undo()
            raise
        return self

    def _enter(self) -> None:
        from aws_lambda_powertools.utilities import parameters

        # Lambda assumes the function's role (here the administrator, before IAM is enforced)
        role = self.configuration["Role"]
        credentials = client("sts").assume_role(RoleArn=role, RoleSessionName=self.name)["Credentials"]
        self.access_key = credentials["AccessKeyId"]
        patch = self._patch
        for name in list(os.environ):
            if name.startswith(CONTAINER):
                patch.delenv(name)
        for name, value in self.configuration["Environment"]["Variables"].items():
            patch.setenv(name, value)
        for name, value in {"AWS_REGION": REGION, "AWS_DEFAULT_REGION": REGION, "AWS_LAMBDA_FUNCTION_NAME": self.name,
                            "AWS_ACCESS_KEY_ID": credentials["AccessKeyId"],
                            "AWS_SECRET_ACCESS_KEY": credentials["SecretAccessKey"],
                            "AWS_SESSION_TOKEN": credentials["SessionToken"]}.items():
            patch.setenv(name, value)
        patch.setattr(boto3, "DEFAULT_SESSION", None)  # a new container: no client, no credentials cached
        parameters.clear_caches()
        EVALUATIONS.clear()
        REQUESTS.clear()
        self._enforced = enable_iam_authentication()
        self._enforced.__enter__()

    def __exit__(self, *exc: object) -> None:
        from aws_lambda_powertools.utilities import parameters

        try:
            self._enforced.__exit__(None, None, None)
            bootstrap.use(None)
            parameters.clear_caches()
        finally:
            self._patch.undo()

    def start(self) -> None:
        """The cold start: the settings (the secret through Powertools) and the clients, those of GitHub and
        Telegram on the fake world's session."""
        bootstrap.use(bootstrap.build_services(os.environ, session=self.fakes.session))

    def __call__(self, event: dict[str, Any]) -> Any:
        return HANDLERS[self.function](event, LambdaContext(self.name, float(self.configuration["Timeout"])))

    def endpoint(self, guid: str, event: str, payload: dict[str, Any], redelivery: bool) -> int:
        """The GitHub App's webhook, as GitHub calls it: a signed POST /github through the handler."""
        return self(github_event(event, payload, guid=guid, secret=WEBHOOK_SECRET))["statusCode"]

    def evaluations(self) -> list[Evaluation]:
        """moto's evaluation of each AWS request the function made, with its role's credentials: one each."""
        evaluated = [e for e in EVALUATIONS if e.principal == self.principal]
        made = REQUESTS.count(self.access_key)
        assert made == len(evaluated) > 0, f"{made} AWS requests, {len(evaluated)} evaluated"
        return evaluated


def schedule_events(deployment: Deployment) -> list[dict[str, Any]]:
    """The events the sweep function's schedules send it: a rule's constant input, else the scheduled event."""
    events = client("events")
    arn = deployment.functions["SweepFunction"]["FunctionArn"]
    sent = []
    for rule in events.list_rule_names_by_target(TargetArn=arn)["RuleNames"]:
        for target in events.list_targets_by_rule(Rule=rule)["Targets"]:
            if target["Arn"] == arn:
                constant = target.get("Input")
                sent.append(json.loads(constant) if constant else scheduled_event(f"{rule}-1", time.time()))
    return sent


def refusals(evaluations: list[Evaluation]) -> list[Evaluation]:
    return [e for e in evaluations if not e.allowed]


# -- the tests --------------------------------------------------------------------------------------------


def test_moto_cannot_create_exactly_the_types_the_rehearsal_makes_itself(aws):
    from moto.cloudformation.parsing import get_model_map

    # every condition true, so that every resource type the template can have is there
    bucket = f"{STACK}-every-artifacts"
    client("s3").create_bucket(Bucket=bucket)
    every = translate(package(sam_template(), bucket), {**PARAMETERS, **EVERY_CONDITION})
    types = {r["Type"] for r in every["Resources"].values()}
    assert {t for t in types if t not in get_model_map()} == set(MADE_BY_API)


def test_the_outputs_the_readme_names_resolve_to_the_stacks_resources(stack):
    outputs = stack.outputs
    assert DOCUMENTED_OUTPUTS <= set(outputs) and all(outputs[name] for name in DOCUMENTED_OUTPUTS), outputs
    assert "DashboardUrl" not in outputs  # Dashboard=false, the default

    api_id = stack.physical["HttpApi"]
    api = client("apigatewayv2")
    assert outputs["GitHubWebhookUrl"] == f"https://{api_id}.execute-api.{REGION}.amazonaws.com/github"
    assert outputs["TelegramWebhookUrl"] == f"https://{api_id}.execute-api.{REGION}.amazonaws.com/telegram"
    # both routes go to the webhook function (payload 2.0), which lets the API invoke it on them
    webhook = stack.functions["WebhookFunction"]
    integrations = {i["IntegrationId"]: i for i in api.get_integrations(ApiId=api_id)["Items"]}
    routes = {route["RouteKey"]: integrations[route["Target"].removeprefix("integrations/")]
              for route in api.get_routes(ApiId=api_id)["Items"]}
    assert set(routes) == {"POST /github", "POST /telegram"}
    for integration in routes.values():
        assert webhook["FunctionArn"] in integration["IntegrationUri"] and integration["PayloadFormatVersion"] == "2.0"
    policy = json.loads(client("lambda").get_policy(FunctionName=webhook["FunctionName"])["Policy"])
    assert {s["Condition"]["ArnLike"]["AWS:SourceArn"] for s in policy["Statement"]} == {
        f"arn:aws:execute-api:{REGION}:{DEFAULT_ACCOUNT_ID}:{api_id}/*/POST/github",
        f"arn:aws:execute-api:{REGION}:{DEFAULT_ACCOUNT_ID}:{api_id}/*/POST/telegram"}
    [stage] = api.get_stages(ApiId=api_id)["Items"]
    throttling = stage["DefaultRouteSettings"]
    assert stage["StageName"] == "$default"
    assert (throttling["ThrottlingRateLimit"], throttling["ThrottlingBurstLimit"]) == (50, 200)  # the defaults

    # the table and the secret the functions use, their log groups, the alarms' topic
    dynamodb = client("dynamodb")
    table = dynamodb.describe_table(TableName=outputs["TableName"])["Table"]
    assert (table["TableStatus"], table["BillingModeSummary"]["BillingMode"]) == ("ACTIVE", "PAY_PER_REQUEST")
    ttl = dynamodb.describe_time_to_live(TableName=outputs["TableName"])["TimeToLiveDescription"]
    assert (ttl["TimeToLiveStatus"], ttl["AttributeName"]) == ("ENABLED", "ttl")
    backups = dynamodb.describe_continuous_backups(TableName=outputs["TableName"])["ContinuousBackupsDescription"]
    assert backups["PointInTimeRecoveryDescription"]["PointInTimeRecoveryStatus"] == "ENABLED"
    assert outputs["SecretName"] == f"/pager/{STACK}/secrets"
    for configuration in stack.functions.values():
        variables = configuration["Environment"]["Variables"]
        assert (variables["PAGER_TABLE"], variables["PAGER_SECRET_ID"]) == (outputs["TableName"], outputs["SecretName"])
    groups = {g["logGroupName"]: g for g in client("logs").describe_log_groups()["logGroups"]}
    for output, function in (("WebhookLogGroupName", "WebhookFunction"), ("SweepLogGroupName", "SweepFunction")):
        assert outputs[output] == f"/aws/lambda/{stack.functions[function]['FunctionName']}"
        assert groups[outputs[output]]["retentionInDays"] == 30
    client("sns").get_topic_attributes(TopicArn=outputs["AlarmTopicArn"])
    alarms = client("cloudwatch").describe_alarms(AlarmNames=stack.alarm_names())["MetricAlarms"]
    assert len(alarms) == len(stack.alarm_names()) > 0
    assert all(alarm["AlarmActions"] == [outputs["AlarmTopicArn"]] for alarm in alarms)


def test_the_sweep_is_scheduled_without_retries_and_both_functions_carry_the_layer(stack):
    events = client("events")
    sweep = stack.functions["SweepFunction"]
    rules = events.list_rule_names_by_target(TargetArn=sweep["FunctionArn"])["RuleNames"]
    schedules = {events.describe_rule(Name=rule)["ScheduleExpression"] for rule in rules}
    assert schedules == {"rate(15 minutes)", "rate(1 minute)"}
    config = client("lambda").get_function_event_invoke_config(FunctionName=sweep["FunctionName"])
    assert (config["MaximumRetryAttempts"], config["MaximumEventAgeInSeconds"]) == (0, 600)
    for configuration in stack.functions.values():
        assert [layer["Arn"].split(":")[-2] for layer in configuration["Layers"]] == [f"{STACK}-pager"]


def test_both_functions_do_their_work_with_only_what_their_roles_grant(stack):
    fakes = fakes_for(stack)
    granted = {stack.table_arn, stack.secret_arn}

    # GitHub delivers an outsider's new issue to the webhook function
    with Invocation(stack, "WebhookFunction", fakes) as webhook:
        webhook.start()
        fakes.github.endpoint = webhook.endpoint
        delivery = fakes.github.deliver("issues", cases.issue_opened(), guid="rehearsal-issue")
        evaluations = webhook.evaluations()
    assert not refusals(evaluations), f"not granted by the template: {refusals(evaluations)}"
    assert delivery["status_code"] == 200, delivery
    assert any("alice opened issue" in message.text for message in fakes.telegram.chat())
    assert {(e.action, e.resource) for e in evaluations} >= {("ssm:GetParameter", stack.secret_arn),
                                                             ("dynamodb:PutItem", stack.table_arn)}
    assert {e.resource for e in evaluations} <= granted
    assert stack.items(), "the webhook keeps its records in the stack's table"

    # the sweep function, sent what its two schedules send: a sweep run and the recovery check
    sent = schedule_events(stack)
    assert len(sent) == 2
    with Invocation(stack, "SweepFunction", fakes) as sweep:
        sweep.start()
        summaries = [sweep(event) for event in sent]
        evaluations = sweep.evaluations()
    assert not refusals(evaluations), f"not granted by the template: {refusals(evaluations)}"
    [run] = [summary for summary in summaries if "deliveries_seen" in summary]
    assert (run["outcome"], run["state"], run["deliveries_seen"]) == ("done", "saved", 1), run
    [check] = [summary for summary in summaries if summary is not run]
    assert check["outcome"] == "nothing waits", check  # the every-minute recovery check
    assert {e.action for e in evaluations} >= {"ssm:GetParameter", "dynamodb:GetItem", "dynamodb:PutItem"}
    assert {e.resource for e in evaluations} <= granted


def test_a_call_the_template_does_not_grant_is_refused(denied_stack, log_lines):
    fakes = fakes_for(denied_stack)
    with Invocation(denied_stack, "WebhookFunction", fakes) as webhook:
        webhook.start()  # reading the secret is still granted
        fakes.github.endpoint = webhook.endpoint
        delivery = fakes.github.deliver("issues", cases.issue_opened(), guid="rehearsal-issue-refused")
        evaluations = webhook.evaluations()
    assert {(e.action, e.resource) for e in refusals(evaluations)} == {("dynamodb:PutItem", denied_stack.table_arn)}
    assert delivery["status_code"] == 500  # GitHub lists it as failed; the sweep would have it delivered again
    [line] = [line for line in log_lines() if line.get("message") == "delivery"]
    assert line["guid"] == "rehearsal-issue-refused" and line["status"] == 500
    # AWS's code is AccessDeniedException; moto answers a JSON call refused with IAM's XML error, which
    # botocore reads as the HTTP status, 403
    assert re.fullmatch(r"DynamoDB refused save(_all)? .*: (AccessDenied\w*|403)", line["reason"]), line
    assert denied_stack.items() == []


def test_with_a_dashboard_and_an_alarm_email_both_are_made_and_the_dashboard_shows_every_alarm(aws):
    stack = f"{STACK}-dashboard"
    deployment = deploy(sam_template(), stack, {**PARAMETERS, **EVERY_CONDITION})
    name = deployment.physical["Dashboard"]
    console = f"https://console.aws.amazon.com/cloudwatch/home?region={REGION}"
    assert deployment.outputs["DashboardUrl"] == f"{console}#dashboards:name={name}"
    cloudwatch = client("cloudwatch")
    body = json.loads(cloudwatch.get_dashboard(DashboardName=name)["DashboardBody"])
    [shown] = [widget["properties"]["alarms"] for widget in body["widgets"] if widget["type"] == "alarm"]
    alarms = cloudwatch.describe_alarms(AlarmNames=deployment.alarm_names())["MetricAlarms"]
    assert len(alarms) == len(deployment.alarm_names()) > 0
    assert sorted(shown) == sorted(alarm["AlarmArn"] for alarm in alarms)
    topic = deployment.outputs["AlarmTopicArn"]
    subscriptions = client("sns").list_subscriptions_by_topic(TopicArn=topic)["Subscriptions"]
    assert [(s["Protocol"], s["Endpoint"]) for s in subscriptions] == [("email", EVERY_CONDITION["AlarmEmail"])]
