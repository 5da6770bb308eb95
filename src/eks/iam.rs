//! The node identity: an IAM role with the standard worker policies and an
//! instance profile, or an existing role; in both cases the one permission
//! the boot-time signaller needs, scoped to this stack.

use crate::blueprint::{ExistingIdentity, NodeGroup, Source};
use crate::cfn::{Expr, Pseudo, Resource, Template};

/// What the launch template, the node group and the outputs need to know
/// about the identity.
pub struct NodeIdentity {
    /// The value of `IamInstanceProfile.Arn`; `None` for a managed group.
    pub instance_profile_arn: Option<Expr>,
    /// The role's ARN, which a managed node group names.
    pub role_arn: Expr,
    /// The role's logical ID when the stack creates it.
    pub role: Option<String>,
    /// The instance profile's logical ID when the stack creates it.
    pub instance_profile: Option<String>,
}

/// The ARN of an AWS managed policy, in the spelling the blueprint's
/// `iam.extraManagedPolicies` takes.
fn managed_policy_arn(name: &str) -> String {
    format!("arn:${{AWS::Partition}}:iam::aws:policy/{name}")
}

/// The VPC CNI's IPv6 permissions, as the CNI's own documentation lists
/// them for IPv6 mode (aws/amazon-vpc-cni-k8s, `docs/iam-policy.md`) and the
/// EKS user guide for `AmazonEKS_CNI_IPv6_Policy`: assign IPv6 addresses,
/// describe what the CNI reads, and tag the network interfaces it creates.
fn cni_ipv6_policy_document() -> Expr {
    Expr::map([
        ("Version", Expr::str("2012-10-17")),
        (
            "Statement",
            Expr::list([
                Expr::map([
                    ("Effect", Expr::str("Allow")),
                    (
                        "Action",
                        Expr::list(
                            [
                                "ec2:AssignIpv6Addresses",
                                "ec2:DescribeInstances",
                                "ec2:DescribeTags",
                                "ec2:DescribeNetworkInterfaces",
                                "ec2:DescribeInstanceTypes",
                            ]
                            .map(Expr::str),
                        ),
                    ),
                    ("Resource", Expr::str("*")),
                ]),
                Expr::map([
                    ("Effect", Expr::str("Allow")),
                    ("Action", Expr::str("ec2:CreateTags")),
                    (
                        "Resource",
                        Expr::sub("arn:${AWS::Partition}:ec2:*:*:network-interface/*"),
                    ),
                ]),
            ]),
        ),
    ])
}

/// The inline policy that lets a node signal this stack and nothing else.
fn signal_policy_document() -> Expr {
    Expr::map([
        ("Version", Expr::str("2012-10-17")),
        (
            "Statement",
            Expr::list([Expr::map([
                ("Sid", Expr::str("SignalThisStack")),
                ("Effect", Expr::str("Allow")),
                ("Action", Expr::str("cloudformation:SignalResource")),
                (
                    "Resource",
                    Expr::sub(
                        "arn:${AWS::Partition}:cloudformation:${AWS::Region}:${AWS::AccountId}:stack/${AWS::StackName}/*",
                    ),
                ),
            ])]),
        ),
    ])
}

/// Adds the group's identity: the permission an existing role needs, or a
/// new role; and, for a self-managed group, an instance profile unless an
/// existing one is named.
pub fn lower(template: &mut Template, group: &NodeGroup, ipv6: bool) -> NodeIdentity {
    match &group.iam.existing {
        Some(existing) => existing_identity(template, group, existing),
        None => created_identity(template, group, ipv6),
    }
}

/// The identity of a group on an existing role: the role's ARN and, for a
/// self-managed group, the policy that lets it signal this stack and an
/// instance profile (the existing one named, or one made for the role).
fn existing_identity(
    template: &mut Template,
    group: &NodeGroup,
    existing: &ExistingIdentity,
) -> NodeIdentity {
    let id = &group.identity;
    let role_arn = existing_role_arn(existing);
    // EKS makes the instance profile of a managed group, and its nodes
    // do not signal CloudFormation.
    if group.managed.is_some() {
        return NodeIdentity {
            instance_profile_arn: None,
            role_arn,
            role: None,
            instance_profile: None,
        };
    }
    template.resources.insert(
        format!("{id}SignalPolicy"),
        existing_role_signal_policy(id, existing),
    );
    if let Some(arn) = &existing.instance_profile_arn {
        return NodeIdentity {
            instance_profile_arn: Some(existing_instance_profile_arn(template, &arn.value)),
            role_arn,
            role: None,
            instance_profile: None,
        };
    }
    let profile = format!("{id}InstanceProfile");
    template.resources.insert(
        profile.clone(),
        Resource::new("AWS::IAM::InstanceProfile")
            .prop("Path", "/")
            .prop("Roles", Expr::list([Expr::str(&existing.role_name)])),
    );
    NodeIdentity {
        instance_profile_arn: Some(Expr::get_att(&profile, "Arn")),
        role_arn,
        role: None,
        instance_profile: Some(profile),
    }
}

/// An existing role's ARN. The role's path and name are the user's text:
/// literal, never a `${...}`. The ARN holds the path
/// (`:role/platform/nodes`).
fn existing_role_arn(existing: &ExistingIdentity) -> Expr {
    super::text(&[
        ("arn:", None),
        ("Partition", Some(&Expr::pseudo(Pseudo::Partition))),
        (":iam::", None),
        ("AccountId", Some(&Expr::pseudo(Pseudo::AccountId))),
        (":role", None),
        (&existing.path, None),
        (&existing.role_name, None),
    ])
}

/// The policy a self-managed group adds to its existing role so that its
/// nodes may signal this stack, named after the stack and the group.
fn existing_role_signal_policy(id: &str, existing: &ExistingIdentity) -> Resource {
    Resource::new("AWS::IAM::RolePolicy")
        .prop("RoleName", existing.role_name.as_str())
        .prop(
            "PolicyName",
            Expr::sub(format!("${{AWS::StackName}}-{id}-signal")),
        )
        .prop("PolicyDocument", signal_policy_document())
}

/// The ARN of the existing instance profile the blueprint names: its text,
/// or the parameter or import that holds it.
fn existing_instance_profile_arn(template: &mut Template, arn: &Source) -> Expr {
    match arn {
        Source::Literal(text) => Expr::sub_or_str(text),
        source => super::inputs::value(
            template,
            source,
            super::inputs::Kind::String,
            "The ARN of the nodes' existing instance profile",
        ),
    }
}

/// The identity of a group whose role the stack creates: the role and, for
/// a self-managed group, its instance profile. Groups made from one `perAz`
/// group share the role made for the first.
fn created_identity(template: &mut Template, group: &NodeGroup, ipv6: bool) -> NodeIdentity {
    let id = &group.identity;
    let role = format!("{id}NodeRole");
    let profile = format!("{id}InstanceProfile");
    if template.resources.contains_key(&role) {
        let has_profile = template.resources.contains_key(&profile);
        return NodeIdentity {
            instance_profile_arn: has_profile.then(|| Expr::get_att(&profile, "Arn")),
            role_arn: Expr::get_att(&role, "Arn"),
            role: Some(role),
            instance_profile: has_profile.then_some(profile),
        };
    }
    let node_role = node_role(template, group, ipv6);
    template.resources.insert(role.clone(), node_role);
    let role_arn = Expr::get_att(&role, "Arn");
    if group.managed.is_some() {
        return NodeIdentity {
            instance_profile_arn: None,
            role_arn,
            role: Some(role),
            instance_profile: None,
        };
    }
    template.resources.insert(
        profile.clone(),
        Resource::new("AWS::IAM::InstanceProfile")
            .prop("Path", group.iam.instance_profile_path.as_str())
            .prop("Roles", Expr::list([Expr::reference(&role)])),
    );
    NodeIdentity {
        instance_profile_arn: Some(Expr::get_att(&profile, "Arn")),
        role_arn,
        role: Some(role),
        instance_profile: Some(profile),
    }
}

/// The role the stack creates for a group's nodes, under the blueprint's
/// name, path and permissions boundary.
fn node_role(template: &mut Template, group: &NodeGroup, ipv6: bool) -> Resource {
    let boundary = group
        .iam
        .permissions_boundary
        .as_ref()
        .map(|b| super::inputs::permissions_boundary(template, &b.value));
    Resource::new("AWS::IAM::Role")
        .prop_opt(
            "RoleName",
            group.iam.role_name.as_ref().map(|n| Expr::str(&n.value)),
        )
        .prop_opt("Description", group.iam.role_description.as_deref())
        .prop("Path", group.iam.role_path.as_str())
        .prop_opt("PermissionsBoundary", boundary)
        .prop(
            "AssumeRolePolicyDocument",
            service_trust_policy(Expr::sub("ec2.${AWS::URLSuffix}")),
        )
        .prop("ManagedPolicyArns", managed_policy_arns(group))
        .prop_opt("Policies", inline_policies(group, ipv6))
        .prop_opt("Tags", role_tags(group))
}

/// The created role's tags, as the blueprint writes them.
fn role_tags(group: &NodeGroup) -> Option<Expr> {
    (!group.iam.role_tags.is_empty()).then(|| {
        Expr::list(
            group.iam.role_tags.iter().map(|(key, value)| {
                Expr::map([("Key", Expr::str(key)), ("Value", Expr::str(value))])
            }),
        )
    })
}

/// The trust policy that lets an AWS service take the role: EC2 for node
/// roles, Lambda for the aws-auth provider's.
pub(super) fn service_trust_policy(service: Expr) -> Expr {
    Expr::map([
        ("Version", Expr::str("2012-10-17")),
        (
            "Statement",
            Expr::list([Expr::map([
                ("Effect", Expr::str("Allow")),
                ("Principal", Expr::map([("Service", service)])),
                ("Action", Expr::str("sts:AssumeRole")),
            ])]),
        ),
    ])
}

/// The managed policies of a created role: the standard worker policies,
/// the CNI's unless it has its own service account role, SSM's when asked
/// for, then the blueprint's extra ones. An extra one that is already among
/// the others (written as eksctl's and Terraform's configurations list them)
/// is attached once: IAM's `ManagedPolicyArns` takes each ARN once.
fn managed_policy_arns(group: &NodeGroup) -> Expr {
    let mut names = vec![
        "AmazonEKSWorkerNodePolicy",
        "AmazonEC2ContainerRegistryReadOnly",
    ];
    if !group.iam.cni_uses_irsa {
        names.push("AmazonEKS_CNI_Policy");
    }
    if group.iam.ssm_managed_instance {
        names.push("AmazonSSMManagedInstanceCore");
    }
    let standard: Vec<String> = names.into_iter().map(managed_policy_arn).collect();
    let extra = group
        .iam
        .extra_managed_policies
        .iter()
        .filter(|arn| !standard.contains(arn))
        .map(|arn| Expr::sub_or_str(arn));
    Expr::List(
        standard
            .iter()
            .map(|arn| Expr::sub(arn.as_str()))
            .chain(extra)
            .collect(),
    )
}

/// The inline policies of a created role: signalling this stack, the VPC
/// CNI's IPv6 permissions, and the blueprint's own statements, each when
/// the group needs it; `None` when it needs none.
fn inline_policies(group: &NodeGroup, ipv6: bool) -> Option<Expr> {
    // Only self-managed nodes signal CloudFormation, and only they need an
    // instance profile from the stack: EKS makes one for a managed group.
    let mut inline = Vec::new();
    if group.managed.is_none() {
        inline.push(Expr::map([
            ("PolicyName", Expr::str("signal-cloudformation")),
            ("PolicyDocument", signal_policy_document()),
        ]));
    }
    // `AmazonEKS_CNI_Policy` grants IPv4 addresses only; on an IPv6 cluster
    // the VPC CNI assigns IPv6 addresses, with the permissions AWS documents
    // for its own `AmazonEKS_CNI_IPv6_Policy` (a policy each account creates
    // itself, so it cannot be referred to by ARN).
    if ipv6 && !group.iam.cni_uses_irsa {
        inline.push(Expr::map([
            ("PolicyName", Expr::str("vpc-cni-ipv6")),
            ("PolicyDocument", cni_ipv6_policy_document()),
        ]));
    }
    if !group.iam.policy_statements.is_empty() {
        inline.push(Expr::map([
            ("PolicyName", Expr::str("node-statements")),
            (
                "PolicyDocument",
                Expr::map([
                    ("Version", Expr::str("2012-10-17")),
                    (
                        "Statement",
                        Expr::list(group.iam.policy_statements.iter().map(statement)),
                    ),
                ]),
            ),
        ]));
    }
    (!inline.is_empty()).then(|| Expr::List(inline))
}

/// A policy statement the loader checked, as template data: its strings
/// hold no `${...}` but the pseudo parameters `Fn::Sub` resolves.
fn statement(value: &serde_json::Value) -> Expr {
    use serde_json::Value;
    match value {
        Value::String(text) => Expr::sub_or_str(text),
        Value::Array(items) => Expr::list(items.iter().map(statement)),
        Value::Object(entries) => Expr::Map(
            entries
                .iter()
                .map(|(key, value)| (key.clone(), statement(value)))
                .collect(),
        ),
        Value::Bool(b) => Expr::Bool(*b),
        Value::Number(n) => n
            .as_i64()
            .map_or_else(|| Expr::str(n.to_string()), Expr::Int),
        Value::Null => Expr::str(""),
    }
}
