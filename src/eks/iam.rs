//! The node identity: an IAM role with the standard worker policies and an
//! instance profile, or an existing role; in both cases the one permission
//! the boot-time signaller needs, scoped to this stack.

use crate::blueprint::NodeGroup;
use crate::cfn::{Expr, Resource, Template};

/// What the launch template and the outputs need to know about the identity.
pub struct NodeIdentity {
    /// The value of `IamInstanceProfile.Arn`.
    pub instance_profile_arn: Expr,
    /// The role's logical ID when the stack creates it.
    pub role: Option<String>,
    /// The instance profile's logical ID when the stack creates it.
    pub instance_profile: Option<String>,
}

fn managed_policy(name: &str) -> Expr {
    Expr::sub(format!("arn:${{AWS::Partition}}:iam::aws:policy/{name}"))
}

/// A policy ARN from the blueprint; `${AWS::Partition}` in it is honoured.
fn policy_arn(arn: &str) -> Expr {
    if arn.contains("${") {
        Expr::sub(arn)
    } else {
        Expr::str(arn)
    }
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

pub fn lower(template: &mut Template, group: &NodeGroup) -> NodeIdentity {
    let id = &group.logical_id;
    if let Some(existing) = &group.iam.existing {
        template.resources.insert(
            format!("{id}SignalPolicy"),
            Resource::new("AWS::IAM::RolePolicy")
                .prop("RoleName", existing.role_name.as_str())
                .prop(
                    "PolicyName",
                    Expr::sub(format!("${{AWS::StackName}}-{id}-signal")),
                )
                .prop("PolicyDocument", signal_policy_document()),
        );
        if let Some(arn) = &existing.instance_profile_arn {
            return NodeIdentity {
                instance_profile_arn: Expr::str(arn),
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
        return NodeIdentity {
            instance_profile_arn: Expr::get_att(&profile, "Arn"),
            role: None,
            instance_profile: Some(profile),
        };
    }

    let mut policies = vec![
        managed_policy("AmazonEKSWorkerNodePolicy"),
        managed_policy("AmazonEC2ContainerRegistryReadOnly"),
    ];
    if !group.iam.cni_uses_irsa {
        policies.push(managed_policy("AmazonEKS_CNI_Policy"));
    }
    if group.iam.ssm_managed_instance {
        policies.push(managed_policy("AmazonSSMManagedInstanceCore"));
    }
    policies.extend(
        group
            .iam
            .extra_managed_policies
            .iter()
            .map(|arn| policy_arn(arn)),
    );

    let role = format!("{id}NodeRole");
    let assume = Expr::map([
        ("Version", Expr::str("2012-10-17")),
        (
            "Statement",
            Expr::list([Expr::map([
                ("Effect", Expr::str("Allow")),
                (
                    "Principal",
                    Expr::map([("Service", Expr::sub("ec2.${AWS::URLSuffix}"))]),
                ),
                ("Action", Expr::str("sts:AssumeRole")),
            ])]),
        ),
    ]);
    template.resources.insert(
        role.clone(),
        Resource::new("AWS::IAM::Role")
            .prop("Path", "/")
            .prop("AssumeRolePolicyDocument", assume)
            .prop("ManagedPolicyArns", Expr::List(policies))
            .prop(
                "Policies",
                Expr::list([Expr::map([
                    ("PolicyName", Expr::str("signal-cloudformation")),
                    ("PolicyDocument", signal_policy_document()),
                ])]),
            ),
    );
    let profile = format!("{id}InstanceProfile");
    template.resources.insert(
        profile.clone(),
        Resource::new("AWS::IAM::InstanceProfile")
            .prop("Path", "/")
            .prop("Roles", Expr::list([Expr::reference(&role)])),
    );
    NodeIdentity {
        instance_profile_arn: Expr::get_att(&profile, "Arn"),
        role: Some(role),
        instance_profile: Some(profile),
    }
}
