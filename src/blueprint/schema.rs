//! The JSON Schema of the blueprint format, for editors
//! (yaml-language-server). Every object's field names come from the very
//! lists the loader decodes with, so the schema cannot name a field the
//! loader does not know or miss one it does, and every field with a fixed
//! set of values takes the loader's own list (`CAPACITY_TYPES`, ...); a
//! test makes sure every field has a description here.

use serde_json::{Map, Value, json};

use super::hatches::{BOTTLEROCKET_FIELDS, USER_DATA_CONTENT_TYPES, USER_DATA_PART_FIELDS};
use super::load::*;
use super::{API_VERSION, AmiFamily, KIND};

/// An enum of the names a loader choice accepts.
fn one_of<T>(choices: &[(&str, T)]) -> Value {
    json!({"enum": choices.iter().map(|(name, _)| *name).collect::<Vec<_>>()})
}

/// What one field holds, by its name in a given object.
fn field(object: &str, name: &str) -> Option<Value> {
    let string = |description: &str| json!({"type": "string", "description": description});
    let integer = |min: i64, max: i64, description: &str| json!({"type": "integer", "minimum": min, "maximum": max, "description": description});
    let boolean = |description: &str| json!({"type": "boolean", "description": description});
    let strings = |description: &str| json!({"type": "array", "items": {"type": "string"}, "description": description});
    let string_map = |description: &str| json!({"type": "object", "additionalProperties": {"type": ["string", "number"]}, "description": description});
    let source =
        |description: &str| json!({"$ref": "#/definitions/source", "description": description});
    let object_of = |definition: &str, description: &str| json!({"$ref": format!("#/definitions/{definition}"), "description": description});
    let duration = |description: &str| json!({"type": "string", "pattern": "^PT([0-9]+H)?([0-9]+M)?([0-9]+S)?$", "description": description});
    Some(match (object, name) {
        ("blueprint", "extends") => {
            string("A preset name, or a base blueprint's path relative to this one")
        }
        ("blueprint", "apiVersion") => json!({"const": API_VERSION}),
        ("blueprint", "kind") => json!({"const": KIND}),
        ("blueprint", "description") => string("The template's description"),
        ("blueprint", "cluster") => object_of("cluster", "The cluster the nodes join"),
        ("blueprint", "defaults") => {
            object_of("defaults", "Node group fields shared by every group")
        }
        ("blueprint", "nodeGroups") => {
            json!({"type": "array", "items": {"$ref": "#/definitions/nodeGroup"}, "description": "Self-managed node groups"})
        }
        ("blueprint", "managedNodeGroups") => {
            json!({"type": "array", "items": {"$ref": "#/definitions/nodeGroup"}, "description": "Managed node groups"})
        }
        ("blueprint", "suppressions") => {
            json!({"type": "array", "items": {"$ref": "#/definitions/suppression"}, "description": "Validation findings accepted, with a reason"})
        }
        ("blueprint", "stack") => {
            json!({"type": "string", "pattern": "^[A-Za-z][-A-Za-z0-9]*$", "maxLength": 128, "description": "The main stack's name, which names its template file (default: the blueprint file's name); not inherited from a base"})
        }
        ("blueprint", "stacks") => json!({
            "description": "Node groups in stacks of their own: `perGroup`, or stack names mapped to the node groups each holds",
            "oneOf": [
                {"const": "perGroup"},
                {
                    "type": "object",
                    "propertyNames": {"pattern": "^[A-Za-z][-A-Za-z0-9]*$", "maxLength": 128},
                    "additionalProperties": {"type": "array", "items": {"type": "string"}, "minItems": 1}
                }
            ]
        }),
        ("blueprint", "overrides") => {
            json!({"type": "array", "items": {"$ref": "#/definitions/override"}, "description": "Changes to generated resources, applied last: each sets a `value` at a `path` of a resource, or deletes it"})
        }
        ("override", "resource") => {
            string("The logical ID of a generated resource (`eksynth explain` lists them)")
        }
        ("override", "path") => {
            let sections = crate::cfn::patch::SECTIONS.join("|");
            json!({"type": "string", "pattern": format!("^({sections})(\\.[^.]+)*$"), "description": "Where in the resource, dotted: an attribute section, then mapping keys and list indexes (`Properties.Tags.0.Value`)"})
        }
        ("override", "value") => {
            json!({"description": "The new value, intrinsic functions included"})
        }
        ("override", "delete") => boolean("Delete the value at the path instead of setting one"),
        ("suppression", "id") => string("A finding ID, e.g. W5002"),
        ("suppression", "reason") => string("Why the finding is accepted"),
        ("cluster", "name") => source("The cluster name"),
        ("cluster", "kubernetesVersion") => {
            json!({"type": ["string", "number"], "description": "The Kubernetes version, quoted: \"1.33\""})
        }
        ("cluster", "endpoint") => source(
            "The API server endpoint (required when a group bootstraps its own nodes: self-managed, or managed on a custom image)",
        ),
        ("cluster", "certificateAuthority") => {
            source("The certificate authority data (base64; required like `endpoint`)")
        }
        ("cluster", "serviceIpv4Cidr") => {
            source("The Kubernetes service IPv4 CIDR (required on an IPv4 cluster)")
        }
        ("cluster", "controlPlaneSecurityGroup") => source(
            "The control plane security group (required when a group shares the node security group)",
        ),
        ("cluster", "ipFamily") => one_of(IP_FAMILIES),
        ("cluster", "serviceIpv6Cidr") => source(
            "An IPv6 cluster's service CIDR (`kubernetesNetworkConfig.serviceIpv6Cidr`); needs `ipFamily: ipv6`",
        ),
        ("cluster", "clusterSecurityGroup") => source(
            "The cluster security group EKS made, for groups with `nodeSecurityGroup: cluster`",
        ),
        ("cluster", "vpc") => {
            source("The VPC (required by the shared node security group and `ssh`)")
        }
        ("cluster", "authenticationMode") => one_of(AUTHENTICATION_MODES),
        ("cluster", "nodeAccess") => one_of(NODE_ACCESS),
        ("cluster", "prefixDelegation") => boolean(
            "The VPC CNI assigns pods addresses from /28 prefixes: maxPods is checked against prefix capacity",
        ),
        ("cluster", "awsAuthProvider") => object_of(
            "awsAuthProvider",
            "The aws-auth provider: an existing one, or settings of the one emitted",
        ),
        ("awsAuthProvider", "serviceToken") => source("An existing provider's service token"),
        ("awsAuthProvider", "subnets") => {
            strings("Subnets for a provider that reaches a private endpoint")
        }
        ("awsAuthProvider", "securityGroups") => {
            strings("Security groups for the provider in the VPC")
        }
        ("awsAuthProvider", "reservedConcurrency") => integer(1, 1000, "Reserved concurrency"),
        ("awsAuthProvider", "logRetentionDays") => integer(1, 3653, "Log retention in days"),
        ("nodeGroup", "name") => {
            json!({"type": "string", "pattern": "^[A-Za-z][A-Za-z0-9]*(-[A-Za-z0-9]+)*$", "maxLength": 63})
        }
        ("nodeGroup", "amiFamily") => one_of(&AmiFamily::ALL),
        ("nodeGroup", "ami") => json!({
            "description": "`recommended`, a pinned AMI ID, or a custom image from an SSM parameter or a template parameter",
            "oneOf": [
                {"type": "string", "pattern": "^(recommended|ami-[0-9a-f]{8}([0-9a-f]{9})?)$"},
                {"$ref": "#/definitions/ami"}
            ]
        }),
        ("nodeGroup", "fips") => boolean("Bottlerocket's FIPS image (EKS-optimized only)"),
        ("ami", "ssmParameter") => {
            json!({"type": "string", "pattern": "^(/[A-Za-z0-9._-]+)+$|^[A-Za-z0-9._-]+$", "maxLength": 1011, "description": "An SSM parameter holding the AMI ID"})
        }
        ("ami", "parameter") => {
            json!({"type": "string", "pattern": "^[A-Za-z0-9]+$", "maxLength": 255, "description": "A template parameter of type AWS::EC2::Image::Id"})
        }
        ("ami", "default") => {
            json!({"type": "string", "pattern": "^ami-[0-9a-f]{8}([0-9a-f]{9})?$", "description": "The template parameter's default AMI ID"})
        }
        ("nodeGroup", "instanceType") => string("One instance type"),
        ("nodeGroup", "instanceTypes") => {
            json!({"type": "array", "items": {"oneOf": [{"type": "string"}, {"$ref": "#/definitions/weightedInstanceType"}]}, "minItems": 1, "maxItems": 20, "description": "Instance types, each a name or (self-managed) `{type, weight}`: with weights, sizes count capacity units"})
        }
        ("weightedInstanceType", "type") => string("An instance type"),
        ("weightedInstanceType", "weight") => integer(
            1,
            MAX_WEIGHT,
            "Capacity units one instance of the type counts for (`WeightedCapacity`)",
        ),
        ("nodeGroup", "instanceRequirements") => object_of(
            "instanceRequirements",
            "Self-managed: choose instance types by attributes instead of by name",
        ),
        ("instanceRequirements", "architecture") => {
            let mut choices = one_of(ARCHITECTURES);
            if let Value::Object(map) = &mut choices {
                map.insert("description".into(), json!("The image's architecture (default x86_64): only matching types that run it are launched"));
            }
            choices
        }
        ("instanceRequirements", "vCpuCount") => object_of("range", "vCPUs (required)"),
        ("instanceRequirements", "memoryMiB") => object_of("range", "Memory in MiB (required)"),
        ("instanceRequirements", "instanceGenerations") => {
            json!({"type": "array", "items": {"enum": INSTANCE_GENERATIONS}, "description": "Instance generations (default: both)"})
        }
        ("instanceRequirements", "excludedInstanceTypes") => {
            json!({"type": "array", "items": {"type": "string", "pattern": "^[a-z0-9.*-]{1,30}$"}, "maxItems": 400, "description": "Instance types or wildcard patterns (`t2.*`) never chosen"})
        }
        ("range", "min") => json!({"type": "integer", "minimum": 1, "description": "The least"}),
        ("range", "max") => {
            json!({"type": "integer", "minimum": 1, "description": "The most (no upper bound when left out)"})
        }
        ("nodeGroup", "placementGroup") => {
            json!({"type": "string", "minLength": 1, "maxLength": 255, "description": "An existing placement group the instances launch into"})
        }
        ("nodeGroup", "capacityReservation") => json!({
            "description": "The capacity reservations the instances launch into: `open`, `none`, a reservation ID, or a resource group",
            "oneOf": [
                {"enum": ["open", "none"]},
                {"type": "string", "pattern": "^cr-[0-9a-f]{17}$"},
                {"$ref": "#/definitions/capacityReservation"}
            ]
        }),
        ("capacityReservation", "resourceGroupArn") => {
            json!({"type": "string", "pattern": "^arn:.+:resource-groups:.*:group/.+$", "description": "A resource group of capacity reservations"})
        }
        ("nodeGroup", "efa") => boolean(
            "An Elastic Fabric Adapter as the primary interface, in a cluster placement group (EFA-capable types, one subnet)",
        ),
        ("nodeGroup", "minSize") | ("nodeGroup", "desiredCapacity") => {
            integer(0, 10_000, "Instances")
        }
        ("nodeGroup", "maxSize") => integer(1, 10_000, "Instances"),
        ("nodeGroup", "subnets") => {
            json!({"oneOf": [{"type": "array", "items": {"type": "string"}}, {"$ref": "#/definitions/source"}]})
        }
        ("nodeGroup", "labels") => string_map("Kubernetes labels"),
        ("nodeGroup", "taints") => {
            json!({"type": "array", "items": {"$ref": "#/definitions/taint"}})
        }
        ("nodeGroup", "maxPods") => integer(1, 737, "Pods per node"),
        ("nodeGroup", "kubelet") => object_of(
            "kubelet",
            "Kubelet settings: any KubeletConfiguration (kubelet.config.k8s.io/v1beta1) field",
        ),
        ("nodeGroup", "nodeConfig") => {
            let mut spec = crate::upstream::node_config::spec_schema().clone();
            if let Value::Object(map) = &mut spec {
                map.insert("description".into(), json!("AmazonLinux2023: a nodeadm NodeConfig `spec` fragment, merged into the generated one"));
            }
            spec
        }
        ("nodeGroup", "rootVolume") => {
            object_of("rootVolume", "The root (Bottlerocket: data) volume")
        }
        ("nodeGroup", "volumes") => {
            json!({"type": "array", "items": {"$ref": "#/definitions/volume"}, "description": "Extra EBS volumes, encrypted unless `encrypted: false`"})
        }
        ("nodeGroup", "instanceStore") => {
            let mut schema = one_of(INSTANCE_STORE_POLICIES);
            schema["description"] = json!(
                "Assemble the instance store NVMe disks into one RAID 0 array for kubelet and the container runtime (AL2023, AL2, Bottlerocket)"
            );
            schema
        }
        ("nodeGroup", "imds") => object_of("imds", "Instance metadata service settings"),
        ("nodeGroup", "preBootstrapCommands") => strings("Commands run before the node joins"),
        ("nodeGroup", "postBootstrapCommands") => strings(
            "Commands run once the node has joined the cluster, before the signal (self-managed AL2023, AL2, Windows); a failure sends FAILURE",
        ),
        ("nodeGroup", "userDataParts") => {
            json!({"type": "array", "items": {"$ref": "#/definitions/userDataPart"}, "description": "Extra MIME parts of the user data (AL2023, AL2), before eksynth's shell part"})
        }
        ("nodeGroup", "bottlerocket") => {
            object_of("bottlerocket", "Bottlerocket settings beyond eksynth's own")
        }
        ("userDataPart", "contentType") => one_of(USER_DATA_CONTENT_TYPES),
        ("userDataPart", "content") => {
            string("The part's text: a script starts with `#!`, cloud-config is a YAML mapping")
        }
        ("bottlerocket", "settings") => json!({
            "type": "object",
            "description": "Settings under Bottlerocket's `settings`, merged into the TOML eksynth writes; the ones eksynth writes itself are refused",
            "examples": [{"host-containers": {"admin": {"enabled": true}}}],
        }),
        ("nodeGroup", "efsMounts") => {
            json!({"type": "array", "items": {"$ref": "#/definitions/efsMount"}})
        }
        ("nodeGroup", "tags") => string_map("Extra tags"),
        ("nodeGroup", "iam") => object_of("iam", "The node role"),
        ("nodeGroup", "securityGroups") => json!({
            "description": "Extra security groups: IDs, `{parameter: Name}` or `{import: ExportName}`",
            "type": "array",
            "items": {"anyOf": [{"type": "string", "pattern": "^sg-"}, {"$ref": "#/definitions/source"}]},
        }),
        ("nodeGroup", "nodeSecurityGroup") => one_of(NODE_SECURITY_GROUPS),
        ("nodeGroup", "associatePublicIpAddress") => boolean(
            "A public IPv4 address on each node's primary interface (internet-reachable nodes)",
        ),
        ("nodeGroup", "keyName") => string("An EC2 key pair (SSH is off unless set)"),
        ("nodeGroup", "ssh") => object_of(
            "ssh",
            "Who may reach the nodes on port 22 (needs `keyName`; not on Windows)",
        ),
        ("ssh", "sourceSecurityGroups") => json!({
            "description": "Security groups allowed in on port 22: IDs, `{parameter: Name}` or `{import: ExportName}`",
            "type": "array",
            "items": {"anyOf": [{"type": "string", "pattern": "^sg-"}, {"$ref": "#/definitions/source"}]},
        }),
        ("ssh", "sourceCidrs") => json!({
            "description": "IPv4 or IPv6 CIDRs allowed in on port 22 (never the whole internet)",
            "type": "array",
            "items": {"type": "string"},
        }),
        ("nodeGroup", "detailedMonitoring") => boolean("Detailed monitoring"),
        ("nodeGroup", "ebsOptimized") => boolean(
            "`EbsOptimized` of the launch template (current types are EBS-optimized by default)",
        ),
        ("nodeGroup", "cpuOptions") => object_of(
            "cpuOptions",
            "`CpuOptions` of the launch template: core count (one instance type), threads per core, AMD SEV-SNP",
        ),
        ("nodeGroup", "cpuCredits") => {
            let mut credits = one_of(CPU_CREDITS);
            credits["description"] =
                json!("CPU credits of burstable instances (T2, T3, T3a, T4g types only)");
            credits
        }
        ("nodeGroup", "enclave") => {
            boolean("Nitro Enclaves on the nodes (not on burstable types or below 4 vCPUs)")
        }
        ("cpuOptions", "coreCount") => {
            integer(1, 448, "CPU cores (needs exactly one instance type)")
        }
        ("cpuOptions", "threadsPerCore") => integer(
            1,
            2,
            "Threads per core: 1 turns simultaneous multithreading off",
        ),
        ("cpuOptions", "amdSevSnp") => boolean("AMD SEV-SNP (M6a, R6a and C6a types only)"),
        ("nodeGroup", "clusterAutoscaler") => json!({
            "description": "Self-managed: the cluster autoscaler's tags (true or false); any group: `{priority}` for the priority expander (`eksynth autoscaler-priorities`)",
            "oneOf": [{"type": "boolean"}, {"$ref": "#/definitions/clusterAutoscaler"}],
        }),
        ("clusterAutoscaler", "enabled") => {
            boolean("Self-managed: the cluster autoscaler's tags (default true)")
        }
        ("clusterAutoscaler", "priority") => integer(
            0,
            1_000_000,
            "The group's priority in the cluster-autoscaler-priority-expander ConfigMap (higher wins)",
        ),
        ("nodeGroup", "autoScalingGroupName") => {
            json!({"type": "string", "pattern": "^[A-Za-z0-9._-]+$", "maxLength": 255, "description": "Self-managed: the Auto Scaling group's name (create-only: changing it replaces the group); not in defaults"})
        }
        ("nodeGroup", "updatePolicy") => object_of("updatePolicy", "The rolling update"),
        ("nodeGroup", "signalTimeout") => {
            duration("How long nodes have to report a healthy kubelet")
        }
        ("nodeGroup", "signalClient") => one_of(SIGNAL_CLIENTS),
        ("nodeGroup", "perAz") => boolean("One group per listed subnet"),
        ("nodeGroup", "capacityType") => one_of(CAPACITY_TYPES),
        ("nodeGroup", "instancesDistribution") => {
            object_of("instancesDistribution", "The spot and on-demand mix")
        }
        ("nodeGroup", "bootstrapArguments") => string("Extra bootstrap.sh arguments (AL2)"),
        ("nodeGroup", "lifecycle") => object_of("lifecycle", "Lifecycle of a self-managed group"),
        ("nodeGroup", "updateConfig") => object_of("updateConfig", "Managed group updates"),
        ("nodeGroup", "forceUpdateEnabled") => boolean("Force updates past pod disruption budgets"),
        ("nodeGroup", "releaseVersion") => string("The EKS AMI release version"),
        ("nodeGroup", "kubernetesVersion") => json!({
            "type": ["string", "number"],
            "description": "The group's Kubernetes version, quoted, while it lags the cluster's in a staged upgrade (at most 3 minor versions older, never newer)"
        }),
        ("nodeGroup", "amiType") => string("The EKS AMI type"),
        ("taint", "key") => string("The taint key"),
        ("taint", "value") => string("The taint value"),
        ("taint", "effect") => one_of(TAINT_EFFECTS),
        ("efsMount", "fileSystemId") => json!({"type": "string", "pattern": "^fs-[0-9a-f]+$"}),
        ("efsMount", "mountPoint") => json!({"type": "string", "pattern": "^/"}),
        ("kubelet", "imageGCHighThresholdPercent") | ("kubelet", "imageGCLowThresholdPercent") => {
            integer(0, 100, "Percent")
        }
        ("kubelet", "evictionHard")
        | ("kubelet", "kubeReserved")
        | ("kubelet", "systemReserved") => string_map("Kubelet resource map"),
        ("kubelet", "podPidsLimit") => integer(-1, 4_194_304, "PIDs per pod"),
        ("kubelet", "cpuManagerPolicy") => json!({"enum": CPU_MANAGER_POLICIES}),
        ("kubelet", "containerLogMaxSize") => string("e.g. 10Mi"),
        ("kubelet", "containerLogMaxFiles") => integer(2, 1000, "Files"),
        ("kubelet", "serializeImagePulls") => boolean("Pull one image at a time"),
        ("rootVolume", "size") => integer(1, 65_536, "GiB (the range depends on the type)"),
        ("rootVolume", "type") => {
            json!({"enum": VOLUME_TYPES})
        }
        ("rootVolume", "iops") => integer(100, 256_000, "IOPS"),
        ("rootVolume", "throughput") => integer(125, 2_000, "MiB/s (gp3)"),
        ("rootVolume", "encrypted") => boolean("Encrypted (the default)"),
        ("rootVolume", "kmsKeyId") | ("volume", "kmsKeyId") => {
            source("A KMS key ID, ARN or alias: a literal, a parameter or an import")
        }
        ("volume", "deviceName") => {
            json!({"type": "string", "pattern": "^(/dev/(xvd|sd)[b-z]|xvd[b-z])$", "description": "`/dev/xvd[b-z]` or `/dev/sd[b-z]` (Bottlerocket: from `c`); Windows: `xvd[b-z]`"})
        }
        ("volume", "size") => integer(
            1,
            65_536,
            "GiB (the range depends on the type); default: the snapshot's",
        ),
        ("volume", "type") => json!({"enum": VOLUME_TYPES, "description": "Default gp3"}),
        ("volume", "iops") => integer(100, 256_000, "IOPS"),
        ("volume", "throughput") => integer(125, 2_000, "MiB/s (gp3)"),
        ("volume", "encrypted") => boolean("Encrypted (the default)"),
        ("volume", "snapshotId") => {
            json!({"type": "string", "pattern": "^snap-([0-9a-f]{8}|[0-9a-f]{17})$", "description": "The snapshot the volume starts from"})
        }
        ("volume", "deleteOnTermination") => boolean("Deleted with the instance (the default)"),
        ("imds", "httpTokens") => one_of(HTTP_TOKENS),
        ("imds", "hopLimit") => integer(1, 3, "Hop limit"),
        ("imds", "blockPods") => boolean("Drop pod traffic to IMDS"),
        ("imds", "instanceTags") => boolean(
            "Self-managed: the instance's tags in IMDS (`InstanceMetadataTags`); tag keys then hold no `/`",
        ),
        ("iam", "cniUsesIrsa") => boolean("Leave the CNI policy off the node role"),
        ("iam", "ssmManagedInstance") => boolean("Attach AmazonSSMManagedInstanceCore"),
        ("iam", "extraManagedPolicies") => {
            strings("Extra managed policy ARNs, each starting `arn:${AWS::Partition}:`")
        }
        ("iam", "roleName") => string("An existing role (the stack creates none)"),
        ("iam", "createdRoleName") => {
            json!({"type": "string", "pattern": "^[A-Za-z0-9+=,.@_-]+$", "maxLength": 64, "description": "The name of the role the stack creates (needs CAPABILITY_NAMED_IAM); not in defaults"})
        }
        ("iam", "rolePath") => {
            json!({"type": "string", "pattern": "^/([!-~]*/)?$", "maxLength": 512, "description": "The IAM path of the role the stack creates, or with `roleName` of the existing role"})
        }
        ("blueprintIam", "rolePath") => {
            json!({"type": "string", "pattern": "^/([!-~]*/)?$", "maxLength": 512, "description": "The IAM path of the roles the stack creates"})
        }
        ("iam", "instanceProfilePath") => {
            json!({"type": "string", "pattern": "^/([!-~]*/)?$", "maxLength": 512, "description": "Self-managed: the instance profile's IAM path (default: the role's)"})
        }
        ("iam", "permissionsBoundary") | ("blueprintIam", "permissionsBoundary") => source(
            "A permissions boundary for the role the stack creates: a customer managed policy's name, an ARN starting `arn:${AWS::Partition}:`, or `{parameter}` / `{import}` of an ARN",
        ),
        ("iam", "policyStatements") => {
            json!({"type": "array", "minItems": 1, "items": {"$ref": "#/definitions/policyStatement"}, "description": "IAM policy statements in an inline policy of the role the stack creates"})
        }
        ("blueprint", "iam") => object_of(
            "blueprintIam",
            "The permissions boundary and path of every role the stack creates, the aws-auth provider's included",
        ),
        ("policyStatement", "Sid") => json!({"type": "string", "pattern": "^[A-Za-z0-9]+$"}),
        ("policyStatement", "Effect") => json!({"enum": ["Allow", "Deny"]}),
        ("policyStatement", "Action")
        | ("policyStatement", "NotAction")
        | ("policyStatement", "Resource")
        | ("policyStatement", "NotResource") => {
            json!({"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}, "minItems": 1}], "description": "One or several; `${AWS::Partition}`, `${AWS::AccountId}`, `${AWS::Region}`, `${AWS::URLSuffix}` and `${AWS::StackName}` are resolved"})
        }
        ("policyStatement", "Condition") => {
            json!({"type": "object", "description": "Condition operators, as IAM writes them"})
        }
        ("iam", "instanceProfileArn") => source(
            "An existing instance profile's ARN (`arn:${AWS::Partition}:iam::${AWS::AccountId}:instance-profile/NAME`), or `{parameter}` / `{import}` of one",
        ),
        ("updatePolicy", "maxBatchSize") => integer(1, 10_000, "Instances per batch"),
        ("updatePolicy", "minInstancesInService") => {
            integer(0, 10_000, "Instances kept in service")
        }
        ("updatePolicy", "pauseTime") => duration("Pause between batches"),
        ("instancesDistribution", "onDemandBaseCapacity") => integer(0, 10_000, "Instances"),
        ("instancesDistribution", "onDemandPercentageAboveBaseCapacity") => {
            integer(0, 100, "Percent")
        }
        ("instancesDistribution", "spotAllocationStrategy") => {
            json!({"enum": SPOT_ALLOCATION_STRATEGIES})
        }
        ("instancesDistribution", "capacityRebalance") => boolean("Capacity rebalancing"),
        ("instancesDistribution", "onDemandAllocationStrategy") => {
            json!({"enum": ON_DEMAND_ALLOCATION_STRATEGIES, "description": "prioritized (the order of instanceTypes; the default) or lowest-price (the default with instanceRequirements)"})
        }
        ("instancesDistribution", "spotInstancePools") => {
            integer(1, 20, "Spot pools the lowest-price strategy spreads over")
        }
        ("instancesDistribution", "spotMaxPrice") => {
            json!({"type": ["string", "number"], "pattern": "^[0-9]+(\\.[0-9]{1,5})?$", "description": "The most an hour of spot may cost, in US dollars (default: the on-demand price)"})
        }
        ("nodeGroup", "capacityReservationId") => {
            json!({"type": "string", "pattern": "^cr-[0-9a-f]{17}$", "description": "Managed, with capacityType CAPACITY_BLOCK: the capacity block's reservation ID"})
        }
        ("nodeGroup", "nodegroupName") => {
            json!({"type": "string", "pattern": "^[A-Za-z0-9][-A-Za-z0-9_]*$", "maxLength": 63, "description": "Managed: the EKS node group's name (default: the group's name)"})
        }
        ("lifecycle", "terminationHookTimeout") => integer(30, 7_200, "Seconds"),
        // Known, so that it is not "unknown", but refused: the schema
        // accepts no value, and says why.
        ("lifecycle", "warmPool") => {
            json!({"not": {}, "description": "Refused: a warmed instance would join the cluster and signal at first boot, then be stopped"})
        }
        ("lifecycle", "maxInstanceLifetime") => integer(86_400, 31_536_000, "Seconds"),
        ("lifecycle", "metricsCollection") => boolean("Group metrics"),
        ("lifecycle", "healthCheckGracePeriod") => integer(0, 7_200, "Seconds"),
        ("lifecycle", "placementGroup") => {
            string("The older spelling of the group's `placementGroup`")
        }
        ("lifecycle", "capacityReservation") => {
            string("The older spelling of the group's `capacityReservation`")
        }
        ("updateConfig", "maxUnavailable") | ("updateConfig", "maxUnavailablePercentage") => {
            integer(1, 100, "Nodes or percent")
        }
        ("updateConfig", "updateStrategy") => one_of(UPDATE_STRATEGIES),
        ("nodeGroup", "nodeRepair") => object_of("nodeRepair", "EKS node auto repair (managed)"),
        ("nodeRepair", "enabled") => boolean("Node auto repair (true once the section is written)"),
        ("nodeRepair", "maxUnhealthyNodeThresholdCount") => {
            integer(1, 10_000, "Unhealthy nodes above which repair stops")
        }
        ("nodeRepair", "maxUnhealthyNodeThresholdPercentage") => integer(
            1,
            100,
            "Percent of unhealthy nodes above which repair stops",
        ),
        ("nodeRepair", "maxParallelNodesRepairedCount") => {
            integer(1, 10_000, "Nodes repaired at once")
        }
        ("nodeRepair", "maxParallelNodesRepairedPercentage") => {
            integer(1, 100, "Percent of unhealthy nodes repaired at once")
        }
        ("nodeRepair", "overrides") => {
            json!({"type": "array", "items": {"$ref": "#/definitions/repairOverride"}, "description": "Repair actions per condition and reason"})
        }
        ("repairOverride", "nodeMonitoringCondition") => {
            string("A condition the node monitoring agent reports, e.g. AcceleratedHardwareReady")
        }
        ("repairOverride", "nodeUnhealthyReason") => {
            string("A reason the node monitoring agent reports, e.g. NvidiaXID31Error")
        }
        ("repairOverride", "minRepairWaitTimeMins") => {
            integer(1, 10_080, "Minutes before a node is repaired")
        }
        ("repairOverride", "repairAction") => one_of(REPAIR_ACTIONS),
        _ => return None,
    })
}

/// The objects of the format and the loader's field list of each.
fn objects() -> Vec<(&'static str, &'static [&'static str])> {
    vec![
        ("blueprint", TOP_FIELDS),
        ("suppression", SUPPRESSION_FIELDS),
        ("override", super::overrides::OVERRIDE_FIELDS),
        ("cluster", CLUSTER_FIELDS),
        ("awsAuthProvider", PROVIDER_FIELDS),
        ("nodeGroup", GROUP_FIELDS),
        ("ami", AMI_FIELDS),
        ("taint", TAINT_FIELDS),
        ("efsMount", EFS_FIELDS),
        ("userDataPart", USER_DATA_PART_FIELDS),
        ("bottlerocket", BOTTLEROCKET_FIELDS),
        ("kubelet", KUBELET_FIELDS),
        ("rootVolume", VOLUME_FIELDS),
        ("volume", DATA_VOLUME_FIELDS),
        ("imds", IMDS_FIELDS),
        ("cpuOptions", CPU_OPTIONS_FIELDS),
        ("ssh", SSH_FIELDS),
        ("iam", IAM_FIELDS),
        ("clusterAutoscaler", CLUSTER_AUTOSCALER_FIELDS),
        ("blueprintIam", TOP_IAM_FIELDS),
        ("policyStatement", STATEMENT_FIELDS),
        ("updatePolicy", UPDATE_FIELDS),
        ("instancesDistribution", DISTRIBUTION_FIELDS),
        ("lifecycle", LIFECYCLE_FIELDS),
        ("updateConfig", UPDATE_CONFIG_FIELDS),
        ("nodeRepair", NODE_REPAIR_FIELDS),
        ("repairOverride", REPAIR_OVERRIDE_FIELDS),
        ("weightedInstanceType", INSTANCE_TYPE_FIELDS),
        ("instanceRequirements", REQUIREMENTS_FIELDS),
        ("range", RANGE_FIELDS),
        ("capacityReservation", CAPACITY_RESERVATION_FIELDS),
    ]
}

fn object_schema(object: &str, fields: &[&str], skip: &[&str]) -> Value {
    let properties: Map<String, Value> = fields
        .iter()
        .filter(|name| !skip.contains(name))
        .filter_map(|name| Some((name.to_string(), field(object, name)?)))
        .collect();
    json!({"type": "object", "additionalProperties": false, "properties": properties})
}

/// Every `KubeletConfiguration` field the loader takes besides the typed
/// ones, with the kubelet's own types (and their nested definitions), so
/// that editors complete them.
fn add_kubelet_fields(definitions: &mut Map<String, Value>) {
    let upstream = crate::upstream::kubelet_config::schema();
    if let Some(Value::Object(nested)) = upstream.get("definitions") {
        for (name, schema) in nested {
            definitions
                .entry(name.clone())
                .or_insert_with(|| schema.clone());
        }
    }
    let Some(Value::Object(properties)) = definitions
        .get_mut("kubelet")
        .and_then(|k| k.get_mut("properties"))
    else {
        return;
    };
    for name in crate::upstream::kubelet_config::names() {
        let generated = KUBELET_GENERATED.iter().any(|(g, _)| g == name);
        if generated || properties.contains_key(*name) {
            continue;
        }
        if let Some(field) = crate::upstream::kubelet_config::field(name) {
            properties.insert(name.to_string(), field.schema.clone());
        }
    }
}

/// The blueprint format as a JSON Schema (draft 7).
pub fn json_schema() -> Value {
    let mut definitions = Map::new();
    for (object, fields) in objects() {
        if object == "blueprint" {
            continue;
        }
        definitions.insert(object.to_string(), object_schema(object, fields, &[]));
    }
    add_kubelet_fields(&mut definitions);
    for (object, required) in [
        ("override", json!(["resource", "path"])),
        ("weightedInstanceType", json!(["type", "weight"])),
        ("instanceRequirements", json!(["vCpuCount", "memoryMiB"])),
        ("range", json!(["min"])),
        ("capacityReservation", json!(["resourceGroupArn"])),
    ] {
        if let Some(Value::Object(entry)) = definitions.get_mut(object) {
            entry.insert("required".into(), required);
        }
    }
    if let Some(Value::Object(entry)) = definitions.get_mut("volume") {
        entry.insert("required".into(), json!(["deviceName"]));
    }
    definitions.insert(
        "defaults".into(),
        object_schema(
            "nodeGroup",
            GROUP_FIELDS,
            &["name", "nodegroupName", "autoScalingGroupName"],
        ),
    );
    let source_fields: Map<String, Value> = SOURCE_FIELDS
        .iter()
        .map(|name| (name.to_string(), json!({"type": ["string", "number"]})))
        .collect();
    definitions.insert(
        "source".into(),
        json!({"oneOf": [
            {"type": ["string", "number"]},
            {"type": "object", "additionalProperties": false, "properties": source_fields, "minProperties": 1}
        ]}),
    );
    let mut root = object_schema("blueprint", TOP_FIELDS, &[]);
    if let Value::Object(root) = &mut root {
        root.insert(
            "$schema".into(),
            json!("http://json-schema.org/draft-07/schema#"),
        );
        root.insert("title".into(), json!("eksynth blueprint"));
        root.insert("required".into(), json!(["apiVersion", "kind"]));
        // A blueprint that extends a base may take its cluster from there.
        root.insert("if".into(), json!({"not": {"required": ["extends"]}}));
        root.insert("then".into(), json!({"required": ["cluster"]}));
        root.insert("definitions".into(), Value::Object(definitions));
    }
    root
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_the_loader_reads_is_described() {
        let mut missing = Vec::new();
        for (object, fields) in objects() {
            for name in fields {
                if field(object, name).is_none() {
                    missing.push(format!("{object}.{name}"));
                }
            }
        }
        assert!(missing.is_empty(), "fields without a schema: {missing:?}");
    }
}
