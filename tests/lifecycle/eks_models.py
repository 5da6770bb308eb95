"""CloudFormation models, for moto, of the two EKS resource types it deploys no model of.

moto 5.2.5 models EKS's API (clusters, node groups) but gives
`AWS::EKS::Nodegroup` and `AWS::EKS::AccessEntry` no CloudFormation model,
so without these a template's managed node groups and access entries are
left out of what is deployed. Each model here does what CloudFormation's
resource handler does with the properties it is given, and no more:

- `AWS::EKS::Nodegroup` creates the group in moto's EKS (the cluster must
  exist there), and on an update either replaces it or updates it in
  place: a change of a create-only property replaces it (and is refused
  while `NodegroupName` stays the same: CloudFormation replaces no
  custom-named resource, User Guide, "Name type"), as the resource's
  provider schema says (`createOnlyProperties` of `aws_eks_nodegroup.json`
  in `schemas/resources.zip`, read at import); any other change (`Version`,
  `ReleaseVersion`, `LaunchTemplate`, `ScalingConfig`, `Labels`, `Taints`,
  `UpdateConfig`, tags) is applied to the same group, as EKS's
  `UpdateNodegroupVersion` and `UpdateNodegroupConfig` do. Which nodes
  EKS then replaces is not modelled; what is asserted is what the group is
  told to run.
- `AWS::EKS::AccessEntry` keeps one entry per cluster and principal, as EKS
  does: a second `CreateAccessEntry` for a principal that has one fails
  with `ResourceInUseException` (EKS API reference, CreateAccessEntry), and
  a delete removes it. Its create-only properties come from
  `aws_eks_accessentry.json` the same way.

moto updates a stack by deleting the resources the new template drops
before it creates the ones it adds, where CloudFormation creates first and
deletes in its cleanup phase; so an access entry that moves to a new
logical ID deploys here although CloudFormation would refuse it. What
`eksynth diff` says about such a move is asserted by `tests/lifecycle.rs`,
not here.

`install()` makes them known to moto; call it before the first stack.
"""

import json
import zipfile
from pathlib import Path

from moto.cloudformation import parsing
from moto.core.common_models import CloudFormationModel
from moto.eks.models import eks_backends

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas" / "resources.zip"


def create_only(schema_file):
    """The create-only properties of a resource type, from its vendored provider schema."""
    with zipfile.ZipFile(SCHEMAS) as archive:
        schema = json.loads(archive.read(schema_file))
    return {pointer.rsplit("/", 1)[1] for pointer in schema["createOnlyProperties"]}


NODEGROUP_CREATE_ONLY = create_only("aws_eks_nodegroup.json")
ACCESS_ENTRY_CREATE_ONLY = create_only("aws_eks_accessentry.json")


def camel(mapping):
    """A CloudFormation property's keys as EKS's API names them (`MinSize` is `minSize`)."""
    return {key[0].lower() + key[1:]: value for key, value in (mapping or {}).items()}


class CustomNamedReplacement(Exception):
    """CloudFormation's refusal to replace a resource whose name the template fixes."""


def replaced(old, new, create_only_properties):
    """Whether an update from `old` properties to `new` replaces the resource."""
    return any(old.get(name) != new.get(name) for name in create_only_properties)


class EksNodegroup(CloudFormationModel):
    """An `AWS::EKS::Nodegroup`, held in moto's EKS."""

    # moto files every model under the service its module is named after.
    __module__ = "moto.eks"

    def __init__(self, account_id, region_name, properties, group):
        self.account_id, self.region_name = account_id, region_name
        self.properties = properties
        self.group = group

    @staticmethod
    def cloudformation_name_type():
        return "NodegroupName"

    @staticmethod
    def cloudformation_type():
        return "AWS::EKS::Nodegroup"

    @property
    def physical_resource_id(self):
        return f"{self.group.cluster_name}/{self.group.nodegroup_name}"

    @classmethod
    def has_cfn_attr(cls, attr):
        return attr in ("Arn", "ClusterName", "NodegroupName")

    def get_cfn_attribute(self, attribute_name):
        return {
            "Arn": self.group.arn,
            "ClusterName": self.group.cluster_name,
            "NodegroupName": self.group.nodegroup_name,
        }[attribute_name]

    @classmethod
    def create_from_cloudformation_json(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs):
        properties = cloudformation_json["Properties"]
        backend = eks_backends[account_id][region_name]
        template = properties.get("LaunchTemplate")
        group = backend.create_nodegroup(
            cluster_name=properties["ClusterName"],
            node_role=properties["NodeRole"],
            nodegroup_name=properties.get("NodegroupName", resource_name),
            subnets=properties["Subnets"],
            scaling_config=camel(properties.get("ScalingConfig")),
            disk_size=properties.get("DiskSize"),
            instance_types=properties.get("InstanceTypes"),
            ami_type=properties.get("AmiType"),
            labels=properties.get("Labels"),
            taints=[camel(taint) for taint in properties.get("Taints", [])],
            tags=properties.get("Tags"),
            launch_template={k: str(v) for k, v in camel(template).items()} or None,
            capacity_type=properties.get("CapacityType"),
            version=properties.get("Version"),
            release_version=properties.get("ReleaseVersion"),
        )
        return cls(account_id, region_name, properties, group)

    @classmethod
    def update_from_cloudformation_json(
        cls, original_resource, new_resource_name, cloudformation_json, account_id, region_name
    ):
        properties = cloudformation_json["Properties"]
        if replaced(original_resource.properties, properties, NODEGROUP_CREATE_ONLY):
            name = properties.get("NodegroupName")
            if name is not None and name == original_resource.properties.get("NodegroupName"):
                # The CloudFormation User Guide, "Name type": an update that
                # replaces a custom-named resource is refused.
                raise CustomNamedReplacement(
                    f"CloudFormation cannot update a stack when a custom-named resource requires replacing. "
                    f"Rename {name} and update the stack again."
                )
            created = cls.create_from_cloudformation_json(new_resource_name, cloudformation_json, account_id, region_name)
            original_resource.delete(account_id, region_name)
            return created
        group = original_resource.group
        # EKS's UpdateNodegroupVersion: the Kubernetes version, the release,
        # or the launch template's version the nodes are replaced with.
        if "Version" in properties:
            group.version = properties["Version"]
        if "ReleaseVersion" in properties:
            group.release_version = properties["ReleaseVersion"]
        if "LaunchTemplate" in properties:
            group.launch_template = {k: str(v) for k, v in camel(properties["LaunchTemplate"]).items()}
        # EKS's UpdateNodegroupConfig: applied to the group, no node replaced.
        group.labels = properties.get("Labels") or {}
        group.taints = [camel(taint) for taint in properties.get("Taints", [])]
        group.scaling_config = camel(properties.get("ScalingConfig"))
        original_resource.properties = properties
        return original_resource

    def delete(self, account_id, region_name):
        eks_backends[account_id][region_name].delete_nodegroup(
            cluster_name=self.group.cluster_name, nodegroup_name=self.group.nodegroup_name
        )


class AccessEntryInUse(Exception):
    """EKS's ResourceInUseException for a principal that has an entry already."""


# Every access entry of the account, by (account, region, cluster, principal),
# as EKS keeps them: one per principal and cluster.
ACCESS_ENTRIES = {}


class EksAccessEntry(CloudFormationModel):
    """An `AWS::EKS::AccessEntry`: one per cluster and principal, as EKS keeps them."""

    __module__ = "moto.eks"

    def __init__(self, key, properties):
        self.key, self.properties = key, properties

    @staticmethod
    def cloudformation_name_type():
        return ""

    @staticmethod
    def cloudformation_type():
        return "AWS::EKS::AccessEntry"

    @property
    def physical_resource_id(self):
        return f"{self.properties['PrincipalArn']}|{self.properties['ClusterName']}"

    @classmethod
    def has_cfn_attr(cls, attr):
        return attr == "AccessEntryArn"

    def get_cfn_attribute(self, attribute_name):
        _, region, cluster, principal = self.key
        return f"arn:aws:eks:{region}:{self.key[0]}:access-entry/{cluster}/{principal}"

    @classmethod
    def create_from_cloudformation_json(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs):
        properties = cloudformation_json["Properties"]
        key = (account_id, region_name, properties["ClusterName"], properties["PrincipalArn"])
        if key in ACCESS_ENTRIES:
            raise AccessEntryInUse(f"an access entry for {key[3]} exists already in cluster {key[2]}")
        entry = cls(key, properties)
        ACCESS_ENTRIES[key] = entry
        return entry

    @classmethod
    def update_from_cloudformation_json(
        cls, original_resource, new_resource_name, cloudformation_json, account_id, region_name
    ):
        properties = cloudformation_json["Properties"]
        if replaced(original_resource.properties, properties, ACCESS_ENTRY_CREATE_ONLY):
            # CloudFormation creates the replacement first: for the same
            # principal, EKS refuses it while the old entry exists.
            created = cls.create_from_cloudformation_json(new_resource_name, cloudformation_json, account_id, region_name)
            original_resource.delete(account_id, region_name)
            return created
        original_resource.properties = properties
        return original_resource

    def delete(self, account_id, region_name):
        ACCESS_ENTRIES.pop(self.key, None)


def install():
    """Makes moto deploy both types (its model map is cached on first use)."""
    ACCESS_ENTRIES.clear()
    for cached in (parsing.get_model_list, parsing.get_model_map, parsing.get_name_type_map):
        cached.cache_clear()
    known = parsing.get_model_map()
    assert known["AWS::EKS::Nodegroup"] is EksNodegroup and known["AWS::EKS::AccessEntry"] is EksAccessEntry


def access_entries(region, cluster):
    """The principals that have an access entry in a cluster, with the entry's type."""
    return {
        principal: entry.properties["Type"]
        for (_, entry_region, entry_cluster, principal), entry in ACCESS_ENTRIES.items()
        if (entry_region, entry_cluster) == (region, cluster)
    }
