//! `eksynth init`: a commented starter blueprint for an existing cluster,
//! its values read from `aws eks describe-cluster` output, or marked
//! placeholders where there is none.
//!
//! Every placeholder is a value the loader refuses with an error of its
//! own at its line (`"<cluster name>"` is no cluster name, `"<vpc id>"` no
//! VPC ID), so a blueprint with placeholders fails with one located error
//! per placeholder, and one without any synthesizes as written.

use std::sync::Arc;

use crate::diagnostic::Diagnostic;
use crate::import::eksctl::cluster::{described, field};
use crate::import::eksctl::values::text;
use crate::import::out::scalar;
use crate::source::{SourceFile, Span};
use crate::syntax::{self, Node};

/// The editor line the book's `schema` section (docs/src/guide/commands.md)
/// documents.
const SCHEMA_LINE: &str = "# yaml-language-server: $schema=https://raw.githubusercontent.com/<owner>/eksynth/main/schemas/blueprint.schema.json";

/// One value of the `cluster` section: the blueprint field, where
/// describe-cluster holds it, and the placeholder written without it.
struct Value {
    field: &'static str,
    path: &'static [&'static str],
    placeholder: &'static str,
}

const NAME: Value = Value {
    field: "name",
    path: &["name"],
    placeholder: "<cluster name>",
};
const VERSION: Value = Value {
    field: "kubernetesVersion",
    path: &["version"],
    placeholder: "<kubernetes version>",
};
const ENDPOINT: Value = Value {
    field: "endpoint",
    path: &["endpoint"],
    placeholder: "<api server endpoint>",
};
const CERTIFICATE_AUTHORITY: Value = Value {
    field: "certificateAuthority",
    path: &["certificateAuthority", "data"],
    placeholder: "<certificate authority data>",
};
const SERVICE_IPV4_CIDR: Value = Value {
    field: "serviceIpv4Cidr",
    path: &["kubernetesNetworkConfig", "serviceIpv4Cidr"],
    placeholder: "<service cidr>",
};
const SERVICE_IPV6_CIDR: Value = Value {
    field: "serviceIpv6Cidr",
    path: &["kubernetesNetworkConfig", "serviceIpv6Cidr"],
    placeholder: "<service ipv6 cidr>",
};
const CONTROL_PLANE_SECURITY_GROUP: Value = Value {
    field: "controlPlaneSecurityGroup",
    path: &["resourcesVpcConfig", "securityGroupIds"],
    placeholder: "<control plane security group id>",
};
const CLUSTER_SECURITY_GROUP: Value = Value {
    field: "clusterSecurityGroup",
    path: &["resourcesVpcConfig", "clusterSecurityGroupId"],
    placeholder: "<cluster security group id>",
};
const VPC: Value = Value {
    field: "vpc",
    path: &["resourcesVpcConfig", "vpcId"],
    placeholder: "<vpc id>",
};
const AUTHENTICATION_MODE: Value = Value {
    field: "authenticationMode",
    path: &["accessConfig", "authenticationMode"],
    placeholder: "<authentication mode>",
};
const SUBNETS: Value = Value {
    field: "subnets",
    path: &["resourcesVpcConfig", "subnetIds"],
    placeholder: "<subnet id>",
};

/// The starter blueprint: from `cluster_json` (the output of `aws eks
/// describe-cluster --name NAME`) when given, with placeholders otherwise.
/// A file that is not describe-cluster output is an error in that file.
pub fn starter(cluster_json: Option<&Arc<SourceFile>>) -> Result<String, Vec<Diagnostic>> {
    if let Some(file) = cluster_json.filter(|file| file.text.trim().is_empty()) {
        return Err(vec![
            Diagnostic::error(file, Some(Span::new(1, 1, 0)), "the file is empty").with_help(
                "give the output of `aws eks describe-cluster --name NAME --output json`",
            ),
        ]);
    }
    if let Some(file) = cluster_json {
        check_document(file)?;
    }
    let described = cluster_json.map(described).transpose()?;
    let mut writer = Writer {
        cluster: described.as_ref().map(|d| &d.cluster),
        text: String::new(),
    };
    writer.header(cluster_json.map(|file| file.name.as_str()));
    writer.cluster_section();
    writer.node_group();
    Ok(writer.text)
}

struct Writer<'a> {
    cluster: Option<&'a Node>,
    text: String,
}

impl Writer<'_> {
    fn line(&mut self, line: &str) {
        self.text.push_str(line);
        self.text.push('\n');
    }

    /// The node at `path` of the describe-cluster output.
    fn node(&self, path: &[&str]) -> Option<&Node> {
        path.iter()
            .try_fold(self.cluster?, |node, name| field(node, name))
    }

    /// The scalar at `path`, when it is there and not empty.
    fn found(&self, path: &[&str]) -> Option<String> {
        self.node(path)
            .and_then(text)
            .filter(|value| !value.is_empty())
    }

    /// The strings of the list at `path`.
    fn found_list(&self, path: &[&str]) -> Vec<String> {
        self.node(path)
            .and_then(Node::as_seq)
            .map(|items| items.iter().filter_map(text).collect())
            .unwrap_or_default()
    }

    /// `field: value` in the `cluster` section, or the placeholder with a
    /// comment saying where the value is found.
    fn value(&mut self, value: &Value, found: Option<String>) {
        match found {
            Some(found) => self.line(&format!("  {}: {}", value.field, scalar(&found))),
            None => {
                let query = value.path.join(".");
                self.line(&format!(
                    "  {}: \"{}\"  # PLACEHOLDER: describe-cluster's cluster.{query}",
                    value.field, value.placeholder
                ));
            }
        }
    }

    fn header(&mut self, from: Option<&str>) {
        self.line(SCHEMA_LINE);
        self.line(
            "# (Replace <owner>, or point it at a copy: `eksynth schema > blueprint.schema.json`",
        );
        self.line("# and `$schema=blueprint.schema.json`.)");
        self.line("#");
        match from {
            Some(from) => {
                let name = self.found(NAME.path).unwrap_or_default();
                self.line(&format!(
                    "# A starter blueprint for the EKS cluster `{}`, its values read from",
                    single_line(&name)
                ));
                self.line(&format!("# `{}` by `eksynth init`.", single_line(from)));
            }
            None => {
                self.line("# A starter blueprint written by `eksynth init`. Every value marked");
                self.line("# PLACEHOLDER stands for one of the cluster's: until each is replaced,");
                self.line("# `eksynth synth` reports it as an error at its line. `eksynth init");
                self.line("# --cluster-json DESCRIBE.json` fills them from the output of");
                self.line(
                    "# `aws eks describe-cluster --name NAME`, whose `--query cluster.FIELD`",
                );
                self.line("# prints one value.");
            }
        }
        self.line("# `eksynth synth THIS.yaml > nodes.cfn.yaml` prints the template.");
        self.line("apiVersion: eksynth.io/v1");
        self.line("kind: NodeBlueprint");
        let stack = self
            .found(NAME.path)
            .map(|name| format!("{name}-nodes"))
            .filter(|stack| is_stack_name(stack))
            .unwrap_or_else(|| "nodes".to_string());
        self.line("# The stack's name: `synth --out-dir DIR` writes DIR/<stack>.yaml.");
        self.line(&format!("stack: {stack}"));
    }

    fn cluster_section(&mut self) {
        self.line("cluster:");
        for value in [&NAME, &VERSION] {
            let found = self.found(value.path);
            self.value(value, found);
        }
        self.line("  # Self-managed nodes join the cluster at its API server endpoint and");
        self.line("  # trust its certificate authority.");
        for value in [&ENDPOINT, &CERTIFICATE_AUTHORITY] {
            let found = self.found(value.path);
            self.value(value, found);
        }
        self.service_cidr();
        self.security_groups();
        let vpc = self.found(VPC.path);
        self.value(&VPC, vpc);
        self.line("  # API, API_AND_CONFIG_MAP or CONFIG_MAP: how nodes are given access");
        self.line("  # (access entries, or the aws-auth ConfigMap).");
        let mode = self.found(AUTHENTICATION_MODE.path);
        self.value(&AUTHENTICATION_MODE, mode);
    }

    /// An IPv6 cluster's nodes take its service IPv6 CIDR; any other its
    /// IPv4 one.
    fn service_cidr(&mut self) {
        let ipv6 = self
            .found(&["kubernetesNetworkConfig", "ipFamily"])
            .is_some_and(|family| family.eq_ignore_ascii_case("ipv6"));
        self.line("  # The Kubernetes service CIDR; the cluster DNS address is taken from it.");
        if ipv6 {
            self.line("  ipFamily: ipv6");
            let cidr = self.found(SERVICE_IPV6_CIDR.path);
            self.value(&SERVICE_IPV6_CIDR, cidr);
        } else {
            let cidr = self.found(SERVICE_IPV4_CIDR.path);
            self.value(&SERVICE_IPV4_CIDR, cidr);
        }
    }

    /// The control plane's security group, which the shared node security
    /// group admits: the first of those the cluster was created with, or
    /// the cluster security group, which EKS puts on the control plane's
    /// network interfaces too.
    fn security_groups(&mut self) {
        let created_with = self.found_list(CONTROL_PLANE_SECURITY_GROUP.path);
        let cluster_group = self.found(CLUSTER_SECURITY_GROUP.path);
        self.line("  # The control plane's security group, which the node security group admits.");
        if created_with.len() > 1 {
            let others: Vec<String> = created_with[1..].iter().map(|g| single_line(g)).collect();
            self.line(&format!(
                "  # The control plane also has {}.",
                others.join(", ")
            ));
        }
        if created_with.is_empty() && cluster_group.is_some() {
            self.line("  # The cluster was created with none of its own: EKS puts the cluster");
            self.line("  # security group on the control plane.");
        }
        let control_plane = created_with.first().cloned().or(cluster_group.clone());
        self.value(&CONTROL_PLANE_SECURITY_GROUP, control_plane);
        match (cluster_group, self.cluster) {
            // Optional: a cluster without one is written without one.
            (None, Some(_)) => {
                self.line("  # describe-cluster names no cluster security group, which groups");
                self.line(
                    "  # with `nodeSecurityGroup: cluster` would need (`clusterSecurityGroup`).",
                );
            }
            (cluster_group, _) => {
                self.line("  # The security group EKS made for the cluster, for groups with");
                self.line("  # `nodeSecurityGroup: cluster`.");
                self.value(&CLUSTER_SECURITY_GROUP, cluster_group);
            }
        }
    }

    fn node_group(&mut self) {
        self.line("# Self-managed node groups (managed ones go under `managedNodeGroups:`);");
        self.line("# `eksynth schema` and the book's field reference (docs/src/reference/fields.md) list every field.");
        self.line("nodeGroups:");
        self.line("  - name: general");
        self.line("    instanceType: m6i.large");
        self.line("    minSize: 1");
        self.line("    maxSize: 3");
        let subnets = self.found_list(SUBNETS.path);
        if subnets.is_empty() {
            self.line("    # The subnets nodes launch in, one or more.");
            self.line("    subnets:");
            self.line(&format!(
                "      - \"{}\"  # PLACEHOLDER: describe-cluster's cluster.{}",
                SUBNETS.placeholder,
                SUBNETS.path.join(".")
            ));
        } else {
            self.line(
                "    # The cluster's subnets: keep those nodes should launch in (private ones).",
            );
            self.line("    subnets:");
            for subnet in subnets {
                self.line(&format!("      - {}", scalar(&subnet)));
            }
        }
    }
}

/// describe-cluster output is one `cluster` object, which has the
/// cluster's ARN: another tool's file (an eksctl config, a blueprint, the
/// output of `describe-nodegroup`) is refused at the key that shows it.
fn check_document(file: &Arc<SourceFile>) -> Result<(), Vec<Diagnostic>> {
    const HELP: &str = "give the output of `aws eks describe-cluster --name NAME --output json`";
    let root = syntax::parse(file).map_err(|d| vec![*d])?;
    let entries = root.as_map().unwrap_or_default();
    if let Some((key, _)) = entries.iter().find(|(key, _)| key.name != "cluster") {
        return Err(vec![
            Diagnostic::error(
                file,
                Some(key.span),
                format!(
                    "this is not describe-cluster output: it has `{}`, where describe-cluster output has only `cluster`",
                    single_line(&key.name)
                ),
            )
            .with_help(HELP),
        ]);
    }
    let Some((key, cluster)) = entries.iter().find(|(key, _)| key.name == "cluster") else {
        // `described` reports the missing object.
        return Ok(());
    };
    let arn = field(cluster, "arn").and_then(text);
    if cluster.as_map().is_some() && !arn.is_some_and(|arn| arn.starts_with("arn:")) {
        return Err(vec![
            Diagnostic::error(
                file,
                Some(key.span),
                "the `cluster` object has no `arn`, which describe-cluster output always has",
            )
            .with_help(HELP),
        ]);
    }
    Ok(())
}

/// Text from the input, on one line of a comment.
fn single_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// A CloudFormation stack name: a letter, then letters, digits and dashes,
/// at most 128 characters.
fn is_stack_name(name: &str) -> bool {
    name.len() <= 128
        && name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}
