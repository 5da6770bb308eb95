"""The lifecycle scenarios, deployed in moto: old, then new, as `aws cloudformation deploy` deploys.

Each scenario of `tests/lifecycle/` listed in `DEPLOYED` is synthesized
(`eksynth synth BLUEPRINT --format json --stack NAME`, old then new) and
deployed in moto (pinned, `moto[cloudformation,...]==5.2.5`, in-process with
`mock_aws`): the stack is created from the old template (`create-stack`,
every parameter at its default), then updated with the new one through a
change set built the way aws-cli's `deploy` builds it
(aws/aws-cli, `awscli/customizations/cloudformation/deploy.py`,
`merge_parameters`, and `deployer.py`, `create_changeset`): every parameter
the new template declares is sent, with its override when one is given, with
`UsePreviousValue` otherwise, and `UsePreviousValue` is dropped for a
parameter the stack does not have yet (which then takes its default). The
change set is executed and both deployments must complete; then each
self-managed group's launch template must carry the image the scenario
expects, read from moto's EC2 (its newest version's `ImageId`), and each
managed group what EKS must hold of it (its Kubernetes `version`, release,
labels, taints, name), read from moto's EKS. A scenario whose update
CloudFormation refuses says so, with the reason.

What moto seeds itself is not enough for the templates, so before the first
deployment the test creates:

- an SSM parameter at every path an SSM-typed parameter of the old or new
  template defaults to (the public EKS ones, a platform's own), each
  holding the ID of an image
  registered for it in moto's EC2, so that "the 1.34 image" is a distinct
  AMI ID (moto's thousand built-in images are not loaded: that takes
  seconds per account); `/aws/` names are reserved to AWS (moto refuses to
  put them, as SSM does), so they are added to moto's parameter store the
  way moto loads its own public parameters;
- the VPC, subnets, security groups and images the blueprints name as
  literals, with exactly those IDs (moto's ID generator is patched while
  each is created): moto checks that they exist.

moto 5.2.5 has no CloudFormation model for AWS::EKS::Nodegroup and
AWS::EKS::AccessEntry; `eks_models.py` (beside this file) gives it one,
over moto's own EKS for node groups, with the replacement rules of the
vendored provider schemas and CloudFormation's refusal to replace a
custom-named resource (its docstring says what is modelled and what not).
The cluster `demo` and the existing roles the blueprints name are created
first.

What moto does not model, and what is therefore not deployed or asserted:

- AWS::EC2::SecurityGroupEgress and AWS::IAM::RolePolicy have no
  CloudFormation model in moto 5.2.5 (`moto/cloudformation/parsing.py`
  finds no `CloudFormationModel` for them). They are taken out of the
  template that is deployed, with the outputs and `DependsOn` entries that
  name them (a resource that still references one makes the scenario fail).
  The set of types taken out is asserted, so a moto that models one of
  them says so.
- moto updates a resource only when its own template text changes or it
  references a changed parameter; a `Fn::GetAtt` whose value changes (the
  Auto Scaling group's launch template version) does not update the Auto
  Scaling group, so the rolling update itself is not exercised: the launch
  template's newest version, which the group's `Version` names, is what is
  asserted.
- Custom resources backed by Lambda functions run in Docker in moto.
- A stack moto creates from a change set cannot import other stacks'
  exports (its `create_change_set` builds the stack without them), so a
  stack the new blueprint adds is created with `create-stack`, with the
  values a CREATE change set of `deploy` would send (the overrides only).

Deployed (`DEPLOYED`), every scenario that is an update: version-bump
(the self-managed image and the managed `Version`),
staged-upgrade-group-follows, parameter-default-changed (with and without
the override), ami-pin-change, detailed-monitoring, instance-type-change,
labels-and-taints-self-managed, labels-and-taints-managed,
managed-release-pinned, scaling-changed, spot-to-on-demand (refused: the
named node group cannot be replaced), subnets-changed (replaced under a
new name), renamed-group, removed-group, group-moved-to-own-stack (both
stacks), self-managed-group-moved (the new stack first, as diff advises).
shared-role-stack-deleted deletes a whole stack: its own test deploys the
three stacks, deletes the group's and checks that the shared access entry
stays. Not deployed: aws-auth-to-access-entries (the aws-auth mapping is a
Lambda-backed custom resource, which moto runs only in Docker; the
provider's own tests cover it; so are access-entries-to-shared and
access-entries-to-shared-retained, whose shared access entry is one) and
existing-role-group-renamed (an access
entry that moves to a new logical ID: moto deletes the old one before it
creates the new, where CloudFormation creates first and EKS refuses).

moto 5.2.5 gets `UsePreviousValue` wrong for an SSM-typed parameter: it keeps
the resolved image ID as the previous value and then looks that ID up as a
parameter path, which fails (`moto/cloudformation/responses.py`,
`create_change_set`, reads `stack.stack_parameters`). CloudFormation's
previous value is the path the stack was given. So the change set passes
that path explicitly for each SSM-typed parameter `deploy` would send with
`UsePreviousValue`, which is what `UsePreviousValue` means;
`test_moto_still_resolves_the_previous_value_wrongly` fails once moto is
fixed, so the workaround can go.

Beside the scenarios, the golden blueprints' templates that moto can
create as they are (`CREATED_GOLDENS`, among them every fleet field's:
warm pools, cluster DNS, placement, capacity blocks, Ubuntu nodes, ...) are
created in moto, and must complete.

Run with a python3 that has moto and boto3 (CI's `.venv-moto`):

    .venv-moto/bin/python3 tests/lifecycle/deploy.py --eksynth target/release/eksynth

Options after `--eksynth PATH` are unittest's (`-v`, a test name).
"""

import argparse
import datetime
import json
import logging
import os
import re
import subprocess
import sys
import unittest
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

# moto's built-in images (over a thousand, with their snapshots) take
# seconds to load in every account; the test registers the few it needs.
os.environ["MOTO_EC2_LOAD_DEFAULT_AMIS"] = "false"

import boto3  # noqa: E402
from botocore.exceptions import ClientError  # noqa: E402
from moto import mock_aws  # noqa: E402
from moto.cloudformation.parsing import resource_class_from_type  # noqa: E402
from moto.core import DEFAULT_ACCOUNT_ID  # noqa: E402
from moto.ssm.models import Parameter, ssm_backends  # noqa: E402

import eks_models  # noqa: E402  (beside this file)

eks_models.install()

SCENARIOS = Path(__file__).resolve().parent
REGION = "eu-west-1"
# What a user deploying these templates passes: the roles are unnamed.
CAPABILITIES = ["CAPABILITY_IAM"]
# Set by main() from --eksynth.
EKSYNTH = None


def eks_al2023(version):
    """The public SSM parameter of the EKS-optimized AL2023 x86_64 AMI for a Kubernetes version."""
    return f"/aws/service/eks/optimized-ami/{version}/amazon-linux-2023/x86_64/standard/recommended/image_id"


@dataclass
class Expectation:
    """What a deployed scenario must leave behind.

    `images` maps each self-managed group's launch template (logical ID, in
    the stack `fleet`) to the image it must carry after the update: an SSM
    parameter path (the AMI seeded there) or an AMI ID. `nodegroups` maps
    each managed group's node group (logical ID, in `fleet`) to what EKS
    must hold of it after the update (`version`, `release_version`,
    `labels`, `taints`, as moto's EKS names them). `stacks` are deployed in
    that order. `refused` says the update must fail, and why.
    """

    images: dict
    stacks: tuple = ("fleet",)
    nodegroups: dict = field(default_factory=dict)
    # The update is refused, with this in CloudFormation's reason.
    refused: str = None


DEPLOYED = {
    "version-bump": Expectation(
        images={"GeneralLaunchTemplate": eks_al2023("1.34")}, nodegroups={"ManagedNodegroup": {"version": "1.34"}}
    ),
    "staged-upgrade-group-follows": Expectation(images={"GeneralLaunchTemplate": eks_al2023("1.34")}),
    # Without an override, `deploy` keeps the stack's previous value of a
    # parameter whose default changed: the old path, and the old image.
    "parameter-default-changed": Expectation(images={"GeneralLaunchTemplate": "/platform/eks/al2023/image_id"}),
    "ami-pin-change": Expectation(images={"GeneralLaunchTemplate": "ami-0fedcba9876543210"}),
    "detailed-monitoring": Expectation(images={"GeneralLaunchTemplate": eks_al2023("1.33")}),
    "instance-type-change": Expectation(images={"GeneralLaunchTemplate": eks_al2023("1.33")}),
    "labels-and-taints-self-managed": Expectation(images={"GeneralLaunchTemplate": eks_al2023("1.33")}),
    "scaling-changed": Expectation(images={"GeneralLaunchTemplate": eks_al2023("1.33")}),
    # CloudFormation refuses to replace the node group under its old name.
    "spot-to-on-demand": Expectation(images={}, refused="Rename managed and update the stack again"),
    # Replaced under the new name the change gives it.
    "subnets-changed": Expectation(
        images={"GeneralLaunchTemplate": eks_al2023("1.33")},
        nodegroups={"ManagedNodegroup": {"name": "managed-b", "version": "1.33"}},
    ),
    "renamed-group": Expectation(images={"WorkersLaunchTemplate": eks_al2023("1.33")}),
    "removed-group": Expectation(images={}),
    # The effect's order: fleet first (the managed group leaves it), then
    # the new stack fleet-managed, which imports fleet's exports.
    "group-moved-to-own-stack": Expectation(
        images={"GeneralLaunchTemplate": eks_al2023("1.33")}, stacks=("fleet", "fleet-managed")
    ),
    # The order diff advises: the new stack first (a second Auto Scaling
    # group is created), then fleet (the old one is deleted).
    "self-managed-group-moved": Expectation(images={}, stacks=("fleet-general", "fleet")),
    "labels-and-taints-managed": Expectation(
        images={"GeneralLaunchTemplate": eks_al2023("1.33")},
        nodegroups={
            "ManagedNodegroup": {
                "version": "1.33",
                "labels": {"team": "data"},
                "taints": [{"key": "dedicated", "value": "data", "effect": "NO_SCHEDULE"}],
            }
        },
    ),
    "managed-release-pinned": Expectation(
        images={}, nodegroups={"ManagedNodegroup": {"version": "1.33", "release_version": "1.33.1-20250820"}}
    ),
}

# Why a scenario is not deployed; each reason is checked against the
# scenario's templates by test_each_reason_not_to_deploy_holds.
LAMBDA_CUSTOM_RESOURCE = (
    "a custom resource backed by a Lambda function (an aws-auth mapping or a shared access entry), "
    "which moto runs only in Docker"
)
STACK_DELETED = (
    "a whole stack is deleted, which is a delete-stack, not an update "
    "(test_deleting_a_group_stack_keeps_the_shared_access_entry deploys it)"
)

CREATED_BEFORE_DELETED = (
    "an access entry moves to a new logical ID for the same role, which CloudFormation refuses because it creates "
    "before it deletes, while moto deletes first (eks_models)"
)

NOT_DEPLOYED = {
    "aws-auth-to-access-entries": LAMBDA_CUSTOM_RESOURCE,
    "access-entries-to-shared": LAMBDA_CUSTOM_RESOURCE,
    "access-entries-to-shared-retained": LAMBDA_CUSTOM_RESOURCE,
    "existing-role-group-renamed": CREATED_BEFORE_DELETED,
    "shared-role-stack-deleted": STACK_DELETED,
}

# The resource types of the scenarios' templates that moto 5.2.5 has no
# CloudFormation model for, even with eks_models; they are taken out of
# what is deployed.
UNMODELLED = {
    "AWS::EC2::SecurityGroupEgress",
    "AWS::IAM::RolePolicy",
}

# Expectation.nodegroups' names, and how DescribeNodegroup names them.
NODEGROUP_FIELDS = {"name": "nodegroupName", "version": "version", "release_version": "releaseVersion", "labels": "labels", "taints": "taints"}

LITERAL_ID = re.compile(r"^(vpc|subnet|sg|ami)-[0-9a-f]{8,17}$")


def synth(blueprint, stack):
    """The template eksynth writes for one stack of a blueprint, as a dict, or None when it has no such stack."""
    result = subprocess.run(
        [EKSYNTH, "synth", str(blueprint), "--format", "json", "--stack", stack],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        if f"makes no stack `{stack}`" in result.stderr:
            return None
        raise AssertionError(f"eksynth synth {blueprint} --stack {stack} failed:\n{result.stderr}")
    return json.loads(result.stdout)


def references(value):
    """The logical IDs and parameters a piece of template references (Ref, Fn::GetAtt, Fn::Sub)."""
    found = set()
    if isinstance(value, dict):
        for key, inner in value.items():
            if key == "Ref" and isinstance(inner, str):
                found.add(inner)
            elif key == "Fn::GetAtt" and isinstance(inner, list) and inner:
                found.add(inner[0])
            elif key == "Fn::Sub":
                text = inner[0] if isinstance(inner, list) else inner
                if isinstance(text, str):
                    found.update(name.split(".")[0] for name in re.findall(r"\$\{([^!}][^}]*)\}", text))
            found |= references(inner)
    elif isinstance(value, list):
        for inner in value:
            found |= references(inner)
    return found


def deployable(template):
    """The template without the resources moto does not model, and the outputs and DependsOn that name them."""
    template = json.loads(json.dumps(template))
    resources = template["Resources"]
    removed = {name for name, resource in resources.items() if resource_class_from_type(resource["Type"]) is None}
    for name in removed:
        del resources[name]
    for name, resource in resources.items():
        depends = resource.get("DependsOn")
        if depends is not None:
            kept = [d for d in ([depends] if isinstance(depends, str) else depends) if d not in removed]
            if kept:
                resource["DependsOn"] = kept
            else:
                del resource["DependsOn"]
        dangling = references(resource) & removed
        if dangling:
            raise AssertionError(f"{name} references {sorted(dangling)}, which moto does not model")
    outputs = template.get("Outputs", {})
    for name in [n for n, output in outputs.items() if references(output) & removed]:
        del outputs[name]
    return template


def literals(value):
    """The VPC, subnet, security group and image IDs a template names as literals."""
    if isinstance(value, str):
        return {value} if LITERAL_ID.match(value) else set()
    if isinstance(value, dict):
        return set().union(*(literals(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(literals(v) for v in value)) if value else set()
    return set()


def ssm_paths(template):
    """The SSM parameter paths an SSM-typed parameter of the template defaults to."""
    return {
        p["Default"]
        for p in template.get("Parameters", {}).values()
        if p.get("Type", "").startswith("AWS::SSM::Parameter::Value") and "Default" in p
    }


class Cloud:
    """One moto account: the seeded resources, and the stacks deployed with `deploy`."""

    def __init__(self):
        self.ec2 = boto3.client("ec2", region_name=REGION)
        self.cfn = boto3.client("cloudformation", region_name=REGION)
        self.images = {}
        # The parameter values each stack was last given, as CloudFormation
        # keeps them (an SSM-typed parameter's path, not its image ID).
        self.given = {}

    def seed_path(self, path):
        """Registers an image for `path`, and an SSM parameter there holding its ID."""
        if path in self.images:
            return
        image = self.ec2.register_image(Name=f"image at {path}")["ImageId"]
        self.images[path] = image
        store = ssm_backends[DEFAULT_ACCOUNT_ID][REGION]._parameters
        store[path].append(
            Parameter(
                account_id=DEFAULT_ACCOUNT_ID,
                name=path,
                value=image,
                parameter_type="String",
                description=None,
                allowed_pattern=None,
                keyid=None,
                last_modified_date=datetime.datetime.now(datetime.timezone.utc),
                version=1,
                data_type="aws:ec2:image",
            )
        )

    def seed_cluster(self, name):
        """Creates an EKS cluster for the node groups and access entries to join."""
        boto3.client("eks", region_name=REGION).create_cluster(
            name=name,
            roleArn=f"arn:aws:iam::{DEFAULT_ACCOUNT_ID}:role/eks-cluster",
            resourcesVpcConfig={"subnetIds": []},
        )

    def nodegroup(self, stack, logical_id):
        """What moto's EKS holds of a stack's managed node group."""
        physical = self.cfn.describe_stack_resource(StackName=stack, LogicalResourceId=logical_id)[
            "StackResourceDetail"
        ]["PhysicalResourceId"]
        cluster, name = physical.split("/", 1)
        return boto3.client("eks", region_name=REGION).describe_nodegroup(clusterName=cluster, nodegroupName=name)[
            "nodegroup"
        ]

    def seed_literals(self, ids):
        """Creates the VPC, subnets, security groups and images named by `ids`, with those IDs."""
        by_kind = {}
        for literal in sorted(ids):
            by_kind.setdefault(literal.split("-")[0], []).append(literal)
        vpcs = by_kind.get("vpc", ["vpc-0aaaaaaaaaaaaaaa0"])
        for index, vpc in enumerate(vpcs):
            with mock.patch("moto.ec2.models.vpcs.random_vpc_id", return_value=vpc):
                self.ec2.create_vpc(CidrBlock=f"10.{index}.0.0/16")
        for index, subnet in enumerate(by_kind.get("subnet", [])):
            with mock.patch("moto.ec2.models.subnets.random_subnet_id", return_value=subnet):
                self.ec2.create_subnet(VpcId=vpcs[0], CidrBlock=f"10.0.{index}.0/24")
        for group in by_kind.get("sg", []):
            with mock.patch("moto.ec2.models.security_groups.random_security_group_id", return_value=group):
                self.ec2.create_security_group(VpcId=vpcs[0], GroupName=group, Description="named by a blueprint")
        for image in by_kind.get("ami", []):
            with mock.patch("moto.ec2.models.amis.random_ami_id", return_value=image):
                self.ec2.register_image(Name=image)

    def create(self, name, template, values=None):
        """`aws cloudformation create-stack`, with `values` and every other parameter's default, and its wait."""
        values = values or {}
        self.cfn.create_stack(
            StackName=name,
            TemplateBody=json.dumps(deployable(template)),
            Parameters=[{"ParameterKey": key, "ParameterValue": value} for key, value in values.items()],
            Capabilities=CAPABILITIES,
        )
        self.cfn.get_waiter("stack_create_complete").wait(StackName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 30})
        declared = template.get("Parameters", {})
        self.given[name] = {key: values.get(key, spec.get("Default")) for key, spec in declared.items()}
        if self.status(name) != "CREATE_COMPLETE":
            raise AssertionError(f"stack {name} was not created: {self.status(name)}")

    def has_stack(self, name):
        try:
            stacks = self.cfn.describe_stacks(StackName=name)["Stacks"]
        except ClientError:
            return False
        return bool(stacks) and stacks[0]["StackStatus"] != "REVIEW_IN_PROGRESS"

    def deploy(self, name, template, overrides=None, previous_path_workaround=True):
        """`aws cloudformation deploy --stack-name NAME --parameter-overrides ...`, in moto."""
        overrides = overrides or {}
        declared = template.get("Parameters", {})
        # merge_parameters: every declared parameter, overridden or kept.
        parameters = [
            {"ParameterKey": key, "ParameterValue": overrides[key]}
            if key in overrides
            else {"ParameterKey": key, "UsePreviousValue": True}
            for key in declared
        ]
        # create_changeset: UsePreviousValue is dropped on a new stack, and
        # for a parameter the existing stack does not have.
        if not self.has_stack(name):
            # A CREATE change set keeps only the overrides. moto 5.2.5 gives
            # a stack created from a change set no access to other stacks'
            # exports (`create_change_set` builds its Stack without them),
            # so the stack is created with create-stack and the same values.
            values = {p["ParameterKey"]: p["ParameterValue"] for p in parameters if "ParameterValue" in p}
            self.create(name, template, values)
            return self.status(name)
        summary = self.cfn.get_template_summary(StackName=name)
        existing = {p["ParameterKey"] for p in summary["Parameters"]}
        parameters = [p for p in parameters if not (p.get("UsePreviousValue") and p["ParameterKey"] not in existing)]
        if previous_path_workaround:
            # UsePreviousValue is the value the stack was given, which for an
            # SSM-typed parameter is the path. moto 5.2.5 keeps the resolved
            # image ID instead and looks that ID up in SSM as a path, which
            # fails; so the path the stack was given is sent explicitly, as
            # CloudFormation would take it.
            parameters = [
                {"ParameterKey": p["ParameterKey"], "ParameterValue": self.given[name][p["ParameterKey"]]}
                if p.get("UsePreviousValue")
                and declared[p["ParameterKey"]].get("Type", "").startswith("AWS::SSM::Parameter::Value")
                else p
                for p in parameters
            ]
        change_set = self.cfn.create_change_set(
            StackName=name,
            ChangeSetName="deploy",
            TemplateBody=json.dumps(deployable(template)),
            ChangeSetType="UPDATE",
            Parameters=parameters,
            Capabilities=CAPABILITIES,
        )
        self.cfn.get_waiter("change_set_create_complete").wait(
            ChangeSetName=change_set["Id"], StackName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 30}
        )
        self.cfn.execute_change_set(ChangeSetName=change_set["Id"], StackName=name)
        self.cfn.get_waiter("stack_update_complete").wait(StackName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 30})
        status = self.status(name)
        # What CloudFormation keeps as each parameter's value: the one sent,
        # the previous one, or the default of a parameter not sent.
        previous = self.given.get(name, {})
        sent = {p["ParameterKey"]: p for p in parameters}
        self.given[name] = {
            key: sent[key]["ParameterValue"]
            if "ParameterValue" in sent.get(key, {})
            else previous[key]
            if key in sent
            else spec.get("Default")
            for key, spec in declared.items()
        }
        return status

    def status(self, name):
        return self.cfn.describe_stacks(StackName=name)["Stacks"][0]["StackStatus"]

    def launch_template_image(self, stack, logical_id):
        """The image of the newest version of a stack's launch template, as moto's EC2 has it."""
        physical = self.cfn.describe_stack_resource(StackName=stack, LogicalResourceId=logical_id)[
            "StackResourceDetail"
        ]["PhysicalResourceId"]
        versions = self.ec2.describe_launch_template_versions(LaunchTemplateId=physical)["LaunchTemplateVersions"]
        newest = max(versions, key=lambda v: v["VersionNumber"])
        return newest["LaunchTemplateData"].get("ImageId")

    def source(self, image):
        """Where an image ID comes from, for messages: the path it was seeded at, or itself."""
        return next((path for path, seeded in self.images.items() if seeded == image), image)

    def image(self, source):
        """The AMI ID an expectation names: the image seeded at a path, or an AMI ID as is."""
        return self.images[source] if source.startswith("/") else source


def templates(scenario, stacks):
    """Each stack's old and new template: {stack: (old or None, new or None)}."""
    folder = SCENARIOS / scenario
    return {stack: (synth(folder / "old.yaml", stack), synth(folder / "new.yaml", stack)) for stack in stacks}


def clusters(template):
    """The names of the clusters a template's EKS resources name as literals."""
    return {
        r["Properties"]["ClusterName"]
        for r in template["Resources"].values()
        if r["Type"].startswith("AWS::EKS::") and isinstance(r["Properties"].get("ClusterName"), str)
    }


def existing_roles(template):
    """The IAM roles a template's instance profiles name as literals: roles the blueprint says exist."""
    return {
        role
        for r in template["Resources"].values()
        if r["Type"] == "AWS::IAM::InstanceProfile"
        for role in r["Properties"].get("Roles", [])
        if isinstance(role, str)
    }


def prepared_cloud(pairs):
    """A moto account with everything the templates name seeded."""
    cloud = Cloud()
    eks_models.ACCESS_ENTRIES.clear()
    everything = [t for pair in pairs.values() for t in pair if t is not None]
    for name in sorted(set().union(*(clusters(t) for t in everything))):
        cloud.seed_cluster(name)
    iam = boto3.client("iam", region_name=REGION)
    for name in sorted(set().union(*(existing_roles(t) for t in everything))):
        iam.create_role(RoleName=name, AssumeRolePolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": []}))
    for path in sorted(set().union(*(ssm_paths(t) for t in everything))):
        cloud.seed_path(path)
    cloud.seed_literals(set().union(*(literals(t) for t in everything)))
    return cloud


def old_then_new(cloud, pairs, stacks, overrides=None, **options):
    """Creates a stack from every old template, then deploys every new one, stack by stack in the given order.

    Returns each stack's status after the deployment of the new template.
    """
    for stack in stacks:
        old = pairs[stack][0]
        if old is not None:
            cloud.create(stack, old)
    return {stack: cloud.deploy(stack, pairs[stack][1], overrides, **options) for stack in stacks if pairs[stack][1]}


def updated(pairs):
    """What each stack's status must be after old_then_new: updated, or created where it is new."""
    return {stack: "UPDATE_COMPLETE" if old else "CREATE_COMPLETE" for stack, (old, new) in pairs.items() if new}


def rename_parameters(template, renames):
    """The template with its parameters renamed, references included (as the image parameters were once named)."""
    text = json.dumps(template)
    for old, new in renames.items():
        text = text.replace(f'"{old}"', f'"{new}"')
    return json.loads(text)


class Deploy(unittest.TestCase):
    def setUp(self):
        # moto warns and logs for each resource it does not model; the set
        # of those types is asserted instead.
        warnings.simplefilter("ignore")
        logging.getLogger("moto").setLevel(logging.ERROR)

    def test_every_scenario_is_deployed_or_says_why_not(self):
        folders = {p.name for p in SCENARIOS.iterdir() if (p / "effect.txt").is_file()}
        self.assertEqual(folders, set(DEPLOYED) | set(NOT_DEPLOYED))
        self.assertFalse(set(DEPLOYED) & set(NOT_DEPLOYED))

    def test_each_scenario_deploys_old_then_new_with_the_expected_images(self):
        for scenario, expectation in DEPLOYED.items():
            with self.subTest(scenario=scenario), mock_aws():
                pairs = templates(scenario, expectation.stacks)
                cloud = prepared_cloud(pairs)
                if expectation.refused:
                    with self.assertRaisesRegex(Exception, expectation.refused):
                        old_then_new(cloud, pairs, expectation.stacks)
                    continue
                statuses = old_then_new(cloud, pairs, expectation.stacks)
                self.assertEqual(statuses, updated(pairs), scenario)
                for logical_id, source in expectation.images.items():
                    image = cloud.launch_template_image("fleet", logical_id)
                    self.assertEqual(
                        image,
                        cloud.image(source),
                        f"{scenario}: {logical_id} carries the image of {cloud.source(image)}, not that of {source}",
                    )
                for logical_id, expected in expectation.nodegroups.items():
                    group = cloud.nodegroup("fleet", logical_id)
                    held = {NODEGROUP_FIELDS[key]: group.get(NODEGROUP_FIELDS[key]) for key in expected}
                    self.assertEqual(held, {NODEGROUP_FIELDS[k]: v for k, v in expected.items()}, scenario)

    def test_a_version_bump_reaches_the_new_image_without_overrides(self):
        with mock_aws():
            pairs = templates("version-bump", ("fleet",))
            cloud = prepared_cloud(pairs)
            self.assertEqual(old_then_new(cloud, pairs, ("fleet",)), {"fleet": "UPDATE_COMPLETE"})
            image = cloud.launch_template_image("fleet", "GeneralLaunchTemplate")
            self.assertEqual(image, cloud.images[eks_al2023("1.34")], f"the image of {cloud.source(image)}")
            self.assertNotEqual(image, cloud.images[eks_al2023("1.33")])

    def test_under_the_old_parameter_names_a_version_bump_keeps_the_old_image(self):
        # Image parameters were once named without the Kubernetes version:
        # the same parameter with a new default, whose previous value
        # `deploy` keeps. This is what the test above would see then.
        renames = {"ImageIdAl2023X86K8s133": "ImageIdAl2023X86", "ImageIdAl2023X86K8s134": "ImageIdAl2023X86"}
        with mock_aws():
            pairs = templates("version-bump", ("fleet",))
            pairs = {stack: tuple(rename_parameters(t, renames) for t in pair) for stack, pair in pairs.items()}
            cloud = prepared_cloud(pairs)
            old_then_new(cloud, pairs, ("fleet",))
            image = cloud.launch_template_image("fleet", "GeneralLaunchTemplate")
            self.assertEqual(image, cloud.images[eks_al2023("1.33")])

    def test_a_changed_parameter_default_needs_the_override(self):
        # What diff warns about: without the override, deploy keeps the old
        # path and the nodes keep the old image.
        old_path, new_path = "/platform/eks/al2023/image_id", "/platform/eks/al2023-v2/image_id"
        cases = [({}, old_path, new_path), ({"ImageIdCustomGeneral": new_path}, new_path, old_path)]
        for overrides, expected, other in cases:
            with self.subTest(overrides=overrides), mock_aws():
                pairs = templates("parameter-default-changed", ("fleet",))
                cloud = prepared_cloud(pairs)
                self.assertEqual(old_then_new(cloud, pairs, ("fleet",), overrides), {"fleet": "UPDATE_COMPLETE"})
                image = cloud.launch_template_image("fleet", "GeneralLaunchTemplate")
                self.assertEqual(image, cloud.images[expected])
                self.assertNotEqual(image, cloud.images[other])

    def test_moto_still_resolves_the_previous_value_wrongly(self):
        # When this fails, moto keeps an SSM-typed parameter's path as its
        # previous value: drop `previous_path_workaround` from deploy().
        with mock_aws():
            pairs = templates("parameter-default-changed", ("fleet",))
            cloud = prepared_cloud(pairs)
            cloud.create("fleet", pairs["fleet"][0])
            # moto asks SSM for a parameter named after the image ID, finds
            # none, and fails reading its value.
            with self.assertRaisesRegex(AttributeError, "'NoneType' object has no attribute 'value'"):
                cloud.deploy("fleet", pairs["fleet"][1], previous_path_workaround=False)

    def test_each_reason_not_to_deploy_holds(self):
        for scenario, reason in NOT_DEPLOYED.items():
            with self.subTest(scenario=scenario):
                if reason == STACK_DELETED:
                    folder = SCENARIOS / scenario
                    self.assertIsNotNone(synth(folder / "old.yaml", "fleet-batch"))
                    self.assertIsNone(synth(folder / "new.yaml", "fleet-batch"))
                    continue
                ((old, new),) = templates(scenario, ("fleet",)).values()
                if reason == LAMBDA_CUSTOM_RESOURCE:
                    self.assertTrue(
                        any(
                            r["Type"].startswith("Custom::")
                            and references(r["Properties"]["ServiceToken"])
                            & {n for n, f in t["Resources"].items() if f["Type"] == "AWS::Lambda::Function"}
                            for t in (old, new)
                            for r in t["Resources"].values()
                        ),
                        scenario,
                    )
                elif reason == CREATED_BEFORE_DELETED:
                    entries = [
                        {
                            json.dumps(r["Properties"]["PrincipalArn"]): name
                            for name, r in t["Resources"].items()
                            if r["Type"] == "AWS::EKS::AccessEntry"
                        }
                        for t in (old, new)
                    ]
                    moved = {p for p in entries[0] if p in entries[1] and entries[0][p] != entries[1][p]}
                    self.assertTrue(moved, scenario)
                else:
                    self.fail(f"{scenario}: no check for the reason {reason!r}")

    def test_a_version_bump_reaches_the_managed_group_without_overrides(self):
        with mock_aws():
            pairs = templates("version-bump", ("fleet",))
            cloud = prepared_cloud(pairs)
            cloud.create("fleet", pairs["fleet"][0])
            self.assertEqual(cloud.nodegroup("fleet", "ManagedNodegroup")["version"], "1.33")
            self.assertEqual(cloud.deploy("fleet", pairs["fleet"][1]), "UPDATE_COMPLETE")
            group = cloud.nodegroup("fleet", "ManagedNodegroup")
            # Updated in place: the same group, told to run 1.34.
            self.assertEqual((group["nodegroupName"], group["version"]), ("managed", "1.34"))

    def test_the_first_template_that_names_a_version_updates_the_group_in_place(self):
        # Templates once named no Version on managed groups: the first
        # deploy of one that does is an update of the same group.
        with mock_aws():
            pairs = templates("version-bump", ("fleet",))
            old = json.loads(json.dumps(pairs["fleet"][1]))
            del old["Resources"]["ManagedNodegroup"]["Properties"]["Version"]
            cloud = prepared_cloud(pairs)
            cloud.create("fleet", old)
            before = cloud.nodegroup("fleet", "ManagedNodegroup")
            self.assertEqual(cloud.deploy("fleet", pairs["fleet"][1]), "UPDATE_COMPLETE")
            after = cloud.nodegroup("fleet", "ManagedNodegroup")
            self.assertEqual((after["nodegroupArn"], after["version"]), (before["nodegroupArn"], "1.34"))

    def test_deleting_a_group_stack_keeps_the_shared_access_entry(self):
        stacks = ("fleet", "fleet-web", "fleet-batch")
        with mock_aws():
            pairs = templates("shared-role-stack-deleted", stacks)
            cloud = prepared_cloud(pairs)
            for stack in stacks:
                cloud.create(stack, pairs[stack][0])
            role = f"arn:aws:iam::{DEFAULT_ACCOUNT_ID}:role/platform-eks-nodes"
            self.assertEqual(eks_models.access_entries(REGION, "demo"), {role: "EC2_LINUX"})
            # The new blueprint makes no stack fleet-batch: it is deleted.
            self.assertIsNone(pairs["fleet-batch"][1])
            cloud.cfn.delete_stack(StackName="fleet-batch")
            self.assertEqual(
                eks_models.access_entries(REGION, "demo"), {role: "EC2_LINUX"}, "web's nodes keep their access"
            )
            # The stacks that stay are unchanged: there is nothing else to deploy.
            for stack in ("fleet", "fleet-web"):
                self.assertEqual(pairs[stack][0], pairs[stack][1], stack)

    def test_the_access_entry_model_refuses_a_second_entry_for_a_role(self):
        # What makes the test above meaningful: the model keeps one entry
        # per principal, as EKS does.
        with mock_aws():
            pairs = templates("shared-role-stack-deleted", ("fleet",))
            cloud = prepared_cloud(pairs)
            cloud.create("fleet", pairs["fleet"][0])
            with self.assertRaisesRegex(eks_models.AccessEntryInUse, "platform-eks-nodes exists already"):
                cloud.create("fleet-copy", pairs["fleet"][0])

    def test_the_types_left_out_are_those_moto_does_not_model(self):
        found = set()
        for scenario in sorted(set(DEPLOYED) | set(NOT_DEPLOYED)):
            folder = SCENARIOS / scenario
            for blueprint in ("old.yaml", "new.yaml"):
                for stack in ("fleet", "fleet-managed", "fleet-general", "fleet-web", "fleet-batch"):
                    template = synth(folder / blueprint, stack)
                    if template is not None:
                        found |= {r["Type"] for r in template["Resources"].values()}
        self.assertEqual({t for t in found if resource_class_from_type(t) is None}, UNMODELLED)


# The golden blueprints (tests/blueprints/ok/) whose template moto creates
# as it is: every resource type it models, no import of another stack's
# export (a parameter without a default is given a value),
# nothing that must exist beforehand beyond what prepared_cloud seeds (a
# target group, a snapshot), and no Lambda-backed custom resource (moto runs
# those in Docker). The others are left out for one of these reasons, or
# because moto lacks a model (AWS::EC2::PlacementGroup, an ingress rule of
# every protocol without FromPort).
CREATED_GOLDENS = (
    "al2-bootstrap ami-sources-managed ami-sources-self-managed auto-recovery autoscaler-names "
    "bottlerocket-fips cluster-dns cluster-values-only-where-used existing-role-path-access-entries "
    "graviton-pinned-ami hatches-al2 hatches-al2023 hatches-bottlerocket hatches-windows "
    "iam-role-tags-description imds-ipv6 instance-id-node-name instances-placement-capacity "
    "instances-requirements instances-weighted-spot kubelet-any-field-al2 kubelet-any-field-al2023 "
    "kubelet-any-field-bottlerocket kubelet-any-field-windows kubelet-settings-together launch-options "
    "lifecycle-placement managed-capacity-block managed-custom-ami-and-bottlerocket "
    "managed-dropped-parameter-suppressed managed-node-repair managed-nodegroup-names managed-warm-pool "
    "many-instance-types networking-imds-instance-tags networking-ipv6 node-access-none "
    "overrides-weaken-guarantees overrides placement self-managed-capacity-block self-managed-warm-pool "
    "staged-upgrade storage-al2 storage-windows ubuntu user-name-tag windows-only-warns"
).split()

GOLDENS = SCENARIOS.parent / "blueprints" / "ok"


class Goldens(unittest.TestCase):
    def setUp(self):
        warnings.simplefilter("ignore")
        logging.getLogger("moto").setLevel(logging.ERROR)

    def test_the_golden_templates_create_in_moto(self):
        for name in CREATED_GOLDENS:
            with self.subTest(golden=name), mock_aws():
                result = subprocess.run(
                    [EKSYNTH, "synth", str(GOLDENS / f"{name}.yaml"), "--format", "json"],
                    capture_output=True,
                    text=True,
                    check=False,
                )
                self.assertEqual(result.returncode, 0, result.stderr)
                template = json.loads(result.stdout)
                cloud = prepared_cloud({"golden": (template, None)})
                # A parameter without a default is given a value, as
                # `--parameter-overrides` would give it.
                given = {
                    key: "given-by-the-deploy"
                    for key, spec in template.get("Parameters", {}).items()
                    if "Default" not in spec
                }
                cloud.create("golden", template, given)
                self.assertEqual(cloud.status("golden"), "CREATE_COMPLETE", name)


def main(argv=None):
    global EKSYNTH
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--eksynth", required=True, help="the eksynth binary")
    options, rest = parser.parse_known_args(argv)
    EKSYNTH = str(Path(options.eksynth).resolve())
    unittest.main(argv=[sys.argv[0], *rest])


if __name__ == "__main__":
    main()
