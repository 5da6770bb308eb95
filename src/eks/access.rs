//! Cluster access for self-managed nodes: an `AWS::EKS::AccessEntry` per
//! node role, or a `Custom::AwsAuth` per node role, or (shared access
//! entries) a `Custom::NodeAccessEntry` per existing node role and, unless
//! the blueprint names an existing one, the provider that serves them.

use super::text;
use crate::blueprint::{AuthenticationMode, AwsAuthProvider, Blueprint, NodeAccess, NodeGroup};
use crate::cfn::{Expr, Pseudo, Resource, Template};

/// The providers' sources, embedded byte for byte as their inline code:
/// what both share (SigV4, HTTP, the answer to CloudFormation), then the
/// aws-auth mapping or the shared access entry. A template carries only
/// the provider it needs: the aws-auth one's `mapRoles` reader is most of
/// its bytes, and each takes a template closer to the size an inline
/// deploy sends.
pub const AWS_AUTH_PROVIDER_SOURCE: &str = concat!(
    include_str!("../../blueprints/aws-auth/common.py"),
    include_str!("../../blueprints/aws-auth/aws_auth.py")
);
pub const ACCESS_ENTRY_PROVIDER_SOURCE: &str = concat!(
    include_str!("../../blueprints/aws-auth/common.py"),
    include_str!("../../blueprints/aws-auth/access_entries.py")
);

pub const PROVIDER: &str = "AwsAuthProvider";
const PROVIDER_ROLE: &str = "AwsAuthProviderRole";
const PROVIDER_LOGS: &str = "AwsAuthProviderLogGroup";
const PROVIDER_ACCESS: &str = "AwsAuthProviderAccessEntry";

/// The username and groups aws-auth gives a node role.
const NODE_USERNAME: &str = "system:node:{{EC2PrivateDNSName}}";

/// The username of nodes named after their instance ID, which is the
/// session name of the role's credentials on the node (amazon-eks-ami,
/// `nodeadm/doc/examples.md`, "Using instance ID as node name").
const INSTANCE_ID_USERNAME: &str = "system:node:{{SessionName}}";

/// Authorizes one self-managed group's role; returns the logical ID of the
/// resource its nodes must wait for, none with `nodeAccess: none`.
pub fn lower(
    template: &mut Template,
    blueprint: &Blueprint,
    cluster_name: &Expr,
    group: &NodeGroup,
    role_arn: &Expr,
) -> Option<String> {
    // An access entry takes the role's full ARN, its path included;
    // aws-auth matches a role's ARN without its path
    // (https://docs.aws.amazon.com/eks/latest/userguide/creating-access-entries.html:
    // "ARNs in aws-auth ConfigMap entries, can't include a path").
    let (role_property, principal) = match blueprint.cluster.node_access {
        NodeAccess::AccessEntries | NodeAccess::SharedAccessEntries(_) => {
            ("PrincipalArn", role_arn.clone())
        }
        NodeAccess::AwsAuth(_) => ("RoleArn", aws_auth_arn(group, role_arn)),
        NodeAccess::None => return None,
    };
    if let Some(id) = existing_access(template, role_property, &principal) {
        return Some(id);
    }
    let stem = access_stem(template, blueprint, group);
    let (id, resource) = match &blueprint.cluster.node_access {
        NodeAccess::SharedAccessEntries(provider) if group.iam.existing.is_some() => {
            let entry = served(template, provider, None, "Custom::NodeAccessEntry");
            (
                format!("{stem}AccessEntry"),
                entry
                    .prop("ClusterName", cluster_name.clone())
                    .prop("PrincipalArn", role_arn.clone())
                    .prop("Type", access_entry_type(group)),
            )
        }
        NodeAccess::AccessEntries | NodeAccess::SharedAccessEntries(_) => (
            format!("{stem}AccessEntry"),
            Resource::new("AWS::EKS::AccessEntry")
                .prop("ClusterName", cluster_name.clone())
                .prop("PrincipalArn", role_arn.clone())
                .prop("Type", access_entry_type(group)),
        ),
        NodeAccess::AwsAuth(provider) => {
            // In the API modes, the inline provider edits aws-auth once its
            // own access entry lets it.
            let access = (blueprint.cluster.authentication_mode != AuthenticationMode::ConfigMap)
                .then_some(PROVIDER_ACCESS);
            let mapping = served(template, provider, access, "Custom::AwsAuth");
            (
                format!("{stem}AwsAuth"),
                mapping
                    .prop("ClusterName", cluster_name.clone())
                    .prop("RoleArn", principal)
                    .prop("Username", aws_auth_username(group))
                    .prop("Groups", aws_auth_groups(group)),
            )
        }
        NodeAccess::None => return None,
    };
    template.resources.entry(id.clone()).or_insert(resource);
    Some(id)
}

/// The access an earlier group gave the same role, if any. Groups that
/// share an existing role share its access: EKS has one access entry per
/// principal, and aws-auth one mapping per role, which the first group to
/// be deleted would otherwise remove for all.
fn existing_access(template: &Template, role_property: &str, principal: &Expr) -> Option<String> {
    template.resources.iter().find_map(|(id, resource)| {
        (matches!(
            resource.kind.as_str(),
            "AWS::EKS::AccessEntry" | "Custom::AwsAuth" | "Custom::NodeAccessEntry"
        ) && resource.properties.get(role_property) == Some(principal))
        .then(|| id.clone())
    })
}

/// A custom resource of `kind` with its service token: the blueprint's
/// existing provider, or the inline one (and then after `access`, the
/// provider's own access entry, when it needs one).
fn served(
    template: &mut Template,
    provider: &AwsAuthProvider,
    access: Option<&str>,
    kind: &str,
) -> Resource {
    let (service_token, depends_on) = match provider {
        AwsAuthProvider::Existing(token) => (
            super::inputs::value(
                template,
                token,
                super::inputs::Kind::String,
                "The service token of an aws-auth provider",
            ),
            None,
        ),
        AwsAuthProvider::Inline { .. } => (Expr::get_att(PROVIDER, "Arn"), access),
    };
    let mut resource = Resource::new(kind).prop("ServiceToken", service_token);
    resource.depends_on.extend(depends_on.map(str::to_string));
    resource
}

/// The username aws-auth gives a group's nodes.
fn aws_auth_username(group: &NodeGroup) -> &'static str {
    if group.instance_id_node_name() {
        INSTANCE_ID_USERNAME
    } else {
        NODE_USERNAME
    }
}

/// The Kubernetes groups aws-auth puts a group's nodes in; Windows nodes
/// also run kube-proxy under a group of their own.
fn aws_auth_groups(group: &NodeGroup) -> Expr {
    let mut groups = vec![Expr::str("system:bootstrappers"), Expr::str("system:nodes")];
    if group.ami_family.is_windows() {
        groups.push(Expr::str("eks:kube-proxy-windows"));
    }
    Expr::List(groups)
}

/// The stem of the logical ID of a role's access. In a blueprint of several
/// stacks, an existing role's access lives in the main stack (see
/// `lower`'s placement) and is named after the role, not after the first
/// group that uses it: adding, removing or moving groups then never renames
/// it, which would replace it, and EKS refuses a second access entry for
/// one principal while the first exists. A shared access entry is named
/// after its role too, in every blueprint. Elsewhere it is named after the
/// group, as it always was.
fn access_stem(template: &Template, blueprint: &Blueprint, group: &NodeGroup) -> String {
    let shared = matches!(
        blueprint.cluster.node_access,
        NodeAccess::SharedAccessEntries(_)
    );
    let Some(existing) = group
        .iam
        .existing
        .as_ref()
        .filter(|_| blueprint.stacks.len() > 1 || shared)
    else {
        return group.identity.clone();
    };
    let mut stem = String::from("Role");
    for word in existing
        .role_name
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            stem.push(first.to_ascii_uppercase());
            stem.push_str(chars.as_str());
        }
    }
    // Two role names that differ only in punctuation (`a-b`, `a.b`).
    let taken = |stem: &str| {
        ["AccessEntry", "AwsAuth"]
            .iter()
            .any(|kind| template.resources.contains_key(&format!("{stem}{kind}")))
    };
    let base = stem.clone();
    let mut n = 2;
    while taken(&stem) {
        stem = format!("{base}{n}");
        n += 1;
    }
    stem
}

/// The access entry type of a group's role: `EC2` for nodes named after
/// their instance ID, whose username the `EC2_LINUX` type (private DNS
/// name) does not match.
fn access_entry_type(group: &NodeGroup) -> &'static str {
    if group.ami_family.is_windows() {
        "EC2_WINDOWS"
    } else if group.instance_id_node_name() {
        "EC2"
    } else {
        "EC2_LINUX"
    }
}

/// What every node group of the blueprint shares: the inline provider,
/// when self-managed groups are mapped in aws-auth by one, or have existing
/// roles whose access entries it shares.
pub fn lower_shared(template: &mut Template, blueprint: &Blueprint, cluster_name: &Expr) {
    if let Some(provider) = blueprint
        .cluster
        .node_access
        .needed_provider(&blueprint.node_groups)
    {
        lower_provider(template, blueprint, cluster_name, provider);
    }
}

/// The provider Lambda, its role, log group and, when it maps roles in
/// aws-auth in the API modes, the access entry that lets it edit ConfigMaps
/// in `kube-system` and nothing else.
fn lower_provider(
    template: &mut Template,
    blueprint: &Blueprint,
    cluster_name: &Expr,
    provider: &AwsAuthProvider,
) {
    let AwsAuthProvider::Inline {
        subnets,
        security_groups,
        reserved_concurrency,
        log_retention_days,
    } = provider
    else {
        return;
    };
    template.resources.insert(
        PROVIDER_LOGS.to_string(),
        provider_logs(*log_retention_days),
    );
    let vpc = !subnets.is_empty();
    let shares = matches!(
        blueprint.cluster.node_access,
        NodeAccess::SharedAccessEntries(_)
    );
    let role = provider_role(template, blueprint, cluster_name, vpc, shares);
    template.resources.insert(PROVIDER_ROLE.to_string(), role);
    let vpc_config = vpc.then(|| {
        Expr::map([
            (
                "SecurityGroupIds",
                Expr::list(security_groups.iter().map(Expr::str)),
            ),
            ("SubnetIds", Expr::list(subnets.iter().map(Expr::str))),
        ])
    });
    template.resources.insert(
        PROVIDER.to_string(),
        provider_function(*reserved_concurrency, vpc_config, shares),
    );
    if !shares && blueprint.cluster.authentication_mode != AuthenticationMode::ConfigMap {
        template.resources.insert(
            PROVIDER_ACCESS.to_string(),
            provider_access_entry(cluster_name),
        );
    }
}

/// The provider's logs, kept for their retention period and gone with the
/// stack; saying so explicitly is what CloudFormation linters ask of a
/// resource that holds data.
fn provider_logs(retention_days: u32) -> Resource {
    let mut logs =
        Resource::new("AWS::Logs::LogGroup").prop("RetentionInDays", Expr::from(retention_days));
    logs.deletion_policy = Some("Delete".into());
    logs.update_replace_policy = Some("Delete".into());
    logs
}

/// The AWS managed policy that lets a Lambda function reach into a VPC.
const LAMBDA_VPC_ACCESS: &str =
    "arn:${AWS::Partition}:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole";

/// The provider's role, under the blueprint's role path and permissions
/// boundary: Lambda assumes it, and it may describe the cluster, write
/// the provider's logs, for a provider in a VPC reach into it and, for
/// shared access entries, make and share the cluster's node roles' ones.
fn provider_role(
    template: &mut Template,
    blueprint: &Blueprint,
    cluster_name: &Expr,
    vpc: bool,
    shares: bool,
) -> Resource {
    let roles = &blueprint.iam;
    let boundary = roles
        .permissions_boundary
        .as_ref()
        .map(|b| super::inputs::permissions_boundary(template, &b.value));
    Resource::new("AWS::IAM::Role")
        .prop_opt("Path", roles.role_path.as_deref().map(Expr::str))
        .prop_opt("PermissionsBoundary", boundary)
        .prop(
            "AssumeRolePolicyDocument",
            super::iam::service_trust_policy(Expr::str("lambda.amazonaws.com")),
        )
        .prop_opt(
            "ManagedPolicyArns",
            vpc.then(|| Expr::list([Expr::sub(LAMBDA_VPC_ACCESS)])),
        )
        .prop(
            "Policies",
            Expr::list([Expr::map([
                ("PolicyName", Expr::str("aws-auth-provider")),
                ("PolicyDocument", provider_policy(cluster_name, shares)),
            ])]),
        )
}

/// What the provider may do: describe this cluster, and write its logs;
/// for shared access entries, also make access entries in this cluster
/// (the provider makes only node entries of roles) and read, tag, untag
/// and delete those of roles.
fn provider_policy(cluster_name: &Expr, shares: bool) -> Expr {
    let (partition, region, account) = (
        Expr::pseudo(Pseudo::Partition),
        Expr::pseudo(Pseudo::Region),
        Expr::pseudo(Pseudo::AccountId),
    );
    let cluster_arn = text(&[
        ("arn:", None),
        ("Partition", Some(&partition)),
        (":eks:", None),
        ("Region", Some(&region)),
        (":", None),
        ("AccountId", Some(&account)),
        (":cluster/", None),
        ("ClusterName", Some(cluster_name)),
    ]);
    let role_entries = text(&[
        ("arn:", None),
        ("Partition", Some(&partition)),
        (":eks:", None),
        ("Region", Some(&region)),
        (":", None),
        ("AccountId", Some(&account)),
        (":access-entry/", None),
        ("ClusterName", Some(cluster_name)),
        ("/role/*", None),
    ]);
    let statement = |sid: &str, actions: &[&str], resource: Expr| {
        Expr::map([
            ("Sid", Expr::str(sid)),
            ("Effect", Expr::str("Allow")),
            ("Action", Expr::list(actions.iter().copied().map(Expr::str))),
            ("Resource", resource),
        ])
    };
    let mut statements = vec![statement(
        "DescribeThisCluster",
        &["eks:DescribeCluster"],
        cluster_arn.clone(),
    )];
    if shares {
        statements.push(statement(
            "MakeNodeAccessEntries",
            &["eks:CreateAccessEntry"],
            cluster_arn,
        ));
        statements.push(statement(
            "ShareNodeAccessEntries",
            &[
                "eks:DeleteAccessEntry",
                "eks:DescribeAccessEntry",
                "eks:TagResource",
                "eks:UntagResource",
            ],
            role_entries,
        ));
    }
    statements.push(statement(
        "WriteItsLogs",
        &["logs:CreateLogStream", "logs:PutLogEvents"],
        Expr::get_att(PROVIDER_LOGS, "Arn"),
    ));
    Expr::map([
        ("Version", Expr::str("2012-10-17")),
        ("Statement", Expr::List(statements)),
    ])
}

/// The provider's Lambda function, its source inline.
fn provider_function(
    reserved_concurrency: Option<u32>,
    vpc_config: Option<Expr>,
    shares: bool,
) -> Resource {
    let (description, source) = if shares {
        (
            "Shares node roles' access entries between stacks, deleting one with its last owner",
            ACCESS_ENTRY_PROVIDER_SOURCE,
        )
    } else {
        (
            "Maps node roles in the aws-auth ConfigMap, one entry per resource, never touching others",
            AWS_AUTH_PROVIDER_SOURCE,
        )
    };
    Resource::new("AWS::Lambda::Function")
        .prop("Description", description)
        .prop("Runtime", "python3.12")
        .prop("Handler", "index.handler")
        .prop("Role", Expr::get_att(PROVIDER_ROLE, "Arn"))
        .prop("Timeout", Expr::Int(300))
        .prop("MemorySize", Expr::Int(256))
        .prop_opt(
            "ReservedConcurrentExecutions",
            reserved_concurrency.map(Expr::from),
        )
        .prop(
            "LoggingConfig",
            Expr::map([("LogGroup", Expr::reference(PROVIDER_LOGS))]),
        )
        .prop_opt("VpcConfig", vpc_config)
        .prop("Code", Expr::map([("ZipFile", Expr::str(source))]))
}

/// The AWS access policy that lets the provider edit what it is scoped to.
const EDIT_POLICY: &str =
    "arn:${AWS::Partition}:eks::aws:cluster-access-policy/AmazonEKSEditPolicy";

/// The provider's access entry in the API modes: it may edit ConfigMaps
/// in `kube-system` and nothing else.
fn provider_access_entry(cluster_name: &Expr) -> Resource {
    Resource::new("AWS::EKS::AccessEntry")
        .prop("ClusterName", cluster_name.clone())
        .prop("PrincipalArn", Expr::get_att(PROVIDER_ROLE, "Arn"))
        .prop("Type", "STANDARD")
        .prop(
            "AccessPolicies",
            Expr::list([Expr::map([
                ("PolicyArn", Expr::sub(EDIT_POLICY)),
                (
                    "AccessScope",
                    Expr::map([
                        ("Type", Expr::str("namespace")),
                        ("Namespaces", Expr::list([Expr::str("kube-system")])),
                    ]),
                ),
            ])]),
        )
}

/// The provider role's ARN, for the one-time mapping a `CONFIG_MAP`
/// cluster needs before the provider can edit aws-auth.
pub fn provider_role_arn(template: &Template, blueprint: &Blueprint) -> Option<Expr> {
    let path = blueprint.iam.role_path.as_deref().unwrap_or("/");
    let maps = matches!(blueprint.cluster.node_access, NodeAccess::AwsAuth(_));
    (maps && template.resources.contains_key(PROVIDER_ROLE)).then(|| {
        // Written as aws-auth takes it: without the role's path.
        if path == "/" {
            Expr::get_att(PROVIDER_ROLE, "Arn")
        } else {
            path_less_arn(Some(&Expr::reference(PROVIDER_ROLE)), "RoleName")
        }
    })
}

/// The ARN aws-auth maps a group's role by: without the role's path.
fn aws_auth_arn(group: &NodeGroup, role_arn: &Expr) -> Expr {
    match &group.iam.existing {
        Some(existing) if existing.path != "/" => path_less_arn(None, &existing.role_name),
        None if group.iam.role_path != "/" => path_less_arn(
            Some(&Expr::reference(format!("{}NodeRole", group.identity))),
            "RoleName",
        ),
        _ => role_arn.clone(),
    }
}

/// A role's ARN without its path, from its name: a created role's
/// (`Ref`, with `name` its placeholder), or an existing role's literal
/// `name` when `role` is `None`.
fn path_less_arn(role: Option<&Expr>, name: &str) -> Expr {
    text(&[
        ("arn:", None),
        ("Partition", Some(&Expr::pseudo(Pseudo::Partition))),
        (":iam::", None),
        ("AccountId", Some(&Expr::pseudo(Pseudo::AccountId))),
        (":role/", None),
        (name, role),
    ])
}
