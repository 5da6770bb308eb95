//! Every node of a blueprint reaches every other on all traffic, the
//! control plane reaches every node on 443, 10250 and 1025-65535, and every
//! node reaches the control plane on 443, whatever mix of the node security
//! group, the cluster security group, SSH, per-group rules and extra
//! security groups the blueprint writes. Judged on the emitted template by
//! a model of which security groups admit which: each group's nodes carry
//! the security groups of its launch template (a managed group's get the
//! cluster security group from EKS only when it names none, as
//! awsdocs/amazon-eks-user-guide `latest/ug/nodes/launch-templates.adoc`
//! says), and the cluster security group admits itself and lets everything
//! out (`latest/ug/networking/sec-group-reqs.adoc`), as the control plane's
//! interfaces, which carry it, do.

use eksynth::cfn::{Expr, Template};
use eksynth::compile::{CompileError, compile};
use eksynth::source::SourceFile;

const CONTROL_PLANE: &str = "sg-0123456789abcdef0";
const CLUSTER: &str = "sg-0fedcba9876543210";

/// A blueprint of the cluster section's common values, `cluster` (more
/// `cluster` fields) and `groups` (more `defaults` fields, then the
/// sections after `defaults`).
fn blueprint(cluster: &str, groups: &str) -> String {
    format!(
        "apiVersion: eksynth.io/v1
kind: NodeBlueprint
cluster:
  name: demo
  kubernetesVersion: \"1.33\"
  endpoint: https://ABC.gr7.eu-west-1.eks.amazonaws.com
  certificateAuthority: Y2VydA==
  vpc: vpc-0123456789abcdef0
{cluster}defaults:
  subnets: [subnet-0123456789abcdef0]
{groups}"
    )
}

/// The common IPv4 cluster: its service CIDR, the control plane's security
/// group and the cluster security group.
fn ipv4_cluster() -> String {
    format!(
        "  serviceIpv4Cidr: 10.100.0.0/16
  controlPlaneSecurityGroup: {CONTROL_PLANE}
  clusterSecurityGroup: {CLUSTER}
"
    )
}

/// The stacks a blueprint synthesizes to, which must have no error.
fn synthesize(text: &str) -> Vec<Template> {
    let file = SourceFile::new("nodes.yaml".to_string(), text.to_string());
    let compiled = match compile(&file) {
        Ok(compiled) => compiled,
        Err(CompileError::Blueprint(diagnostics)) => {
            let rendered: Vec<String> = diagnostics.iter().map(|d| d.render()).collect();
            panic!("the blueprint should compile:\n{}", rendered.join("\n"));
        }
        Err(error) => panic!("{error}"),
    };
    assert!(!compiled.has_errors(), "{:?}", compiled.diagnostics);
    compiled.stacks.into_iter().map(|s| s.template).collect()
}

/// A security group as the model names it: the text of the value that
/// names it in the template.
fn key(expr: &Expr) -> String {
    format!("{expr:?}")
}

fn literal(id: &str) -> String {
    key(&Expr::str(id))
}

/// What a rule lets through.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Traffic {
    All,
    Tcp(i64, i64),
}

/// What a rule's other end is.
#[derive(Debug, PartialEq)]
enum Peer {
    Group(String),
    /// An IPv4 or IPv6 block.
    Cidr(String),
}

#[derive(Debug)]
struct Rule {
    group: String,
    peer: Peer,
    traffic: Traffic,
    ingress: bool,
}

/// The security groups of a template, the rules between them, and the
/// nodes of each group.
struct Model {
    rules: Vec<Rule>,
    /// The security groups EC2 gives its default egress (all IPv4 out):
    /// the template's own that declare no egress of their own.
    default_egress: Vec<String>,
    /// The cluster security group, which EKS makes with an inbound rule
    /// from itself and all traffic out, both families.
    cluster: String,
    /// Each launch template's logical ID and its nodes' security groups.
    nodes: Vec<(String, Vec<String>)>,
    ipv6: bool,
}

fn traffic(rule: &Expr) -> Traffic {
    let int = |field: &str| match field_of(rule, field) {
        Some(Expr::Int(value)) => *value,
        other => panic!("{field} of {rule:?} is {other:?}"),
    };
    match field_of(rule, "IpProtocol").and_then(Expr::as_str) {
        Some("-1") => Traffic::All,
        Some("tcp") => Traffic::Tcp(int("FromPort"), int("ToPort")),
        // Neither lets TCP nor all traffic through.
        _ => Traffic::Tcp(0, -1),
    }
}

fn field_of<'a>(map: &'a Expr, field: &str) -> Option<&'a Expr> {
    match map {
        Expr::Map(entries) => entries.get(field),
        _ => None,
    }
}

fn peer(rule: &Expr, group_key: &str) -> Peer {
    if let Some(group) = field_of(rule, group_key) {
        return Peer::Group(key(group));
    }
    let cidr = field_of(rule, "CidrIp")
        .or_else(|| field_of(rule, "CidrIpv6"))
        .and_then(Expr::as_str)
        .unwrap_or_else(|| panic!("a rule without a peer: {rule:?}"));
    Peer::Cidr(cidr.to_string())
}

impl Model {
    fn of(template: &Template, cluster: &str, ipv6: bool) -> Model {
        let mut model = Model {
            rules: Vec::new(),
            default_egress: Vec::new(),
            cluster: cluster.to_string(),
            nodes: Vec::new(),
            ipv6,
        };
        let managed: Vec<String> = template
            .resources
            .values()
            .filter(|r| r.kind == "AWS::EKS::Nodegroup")
            .filter_map(|r| r.properties.get("LaunchTemplate"))
            .filter_map(|lt| field_of(lt, "Id"))
            .map(key)
            .collect();
        for (id, resource) in &template.resources {
            let properties = Expr::Map(resource.properties.clone());
            match resource.kind.as_str() {
                "AWS::EC2::SecurityGroup" => model.security_group(id, &properties),
                "AWS::EC2::SecurityGroupIngress" => model.rule(&properties, true),
                "AWS::EC2::SecurityGroupEgress" => model.rule(&properties, false),
                "AWS::EC2::LaunchTemplate" => {
                    let is_managed = managed.contains(&key(&Expr::reference(id.as_str())));
                    let groups = model.launch_template_groups(&properties, is_managed);
                    model.nodes.push((id.clone(), groups));
                }
                _ => {}
            }
        }
        model
    }

    fn security_group(&mut self, id: &str, properties: &Expr) {
        let group = key(&Expr::reference(id));
        if let Some(Expr::List(rules)) = field_of(properties, "SecurityGroupIngress") {
            for rule in rules {
                self.rules.push(Rule {
                    group: group.clone(),
                    peer: peer(rule, "SourceSecurityGroupId"),
                    traffic: traffic(rule),
                    ingress: true,
                });
            }
        }
        if field_of(properties, "SecurityGroupEgress").is_none() {
            self.default_egress.push(group);
        }
    }

    fn rule(&mut self, properties: &Expr, ingress: bool) {
        let group = field_of(properties, "GroupId").expect("GroupId");
        let peer_key = if ingress {
            "SourceSecurityGroupId"
        } else {
            "DestinationSecurityGroupId"
        };
        self.rules.push(Rule {
            group: key(group),
            peer: peer(properties, peer_key),
            traffic: traffic(properties),
            ingress,
        });
    }

    /// The security groups a launch template gives its instances: those it
    /// names (on the instance, or on its network interfaces), else, for a
    /// managed group, the cluster security group.
    fn launch_template_groups(&self, properties: &Expr, is_managed: bool) -> Vec<String> {
        let data = field_of(properties, "LaunchTemplateData").expect("LaunchTemplateData");
        let mut groups: Vec<String> = Vec::new();
        if let Some(Expr::List(ids)) = field_of(data, "SecurityGroupIds") {
            groups.extend(ids.iter().map(key));
        }
        if let Some(Expr::List(interfaces)) = field_of(data, "NetworkInterfaces") {
            for interface in interfaces {
                if let Some(Expr::List(ids)) = field_of(interface, "Groups") {
                    groups.extend(ids.iter().map(key));
                }
            }
        }
        if groups.is_empty() && is_managed {
            groups.push(self.cluster.clone());
        }
        groups
    }

    /// Whether the rules that match let all of `traffic` through.
    fn allows(&self, rules: &[&Rule], traffic: Traffic) -> bool {
        let (low, high) = match traffic {
            Traffic::All => return rules.iter().any(|r| r.traffic == Traffic::All),
            Traffic::Tcp(low, high) => (low, high),
        };
        let mut ranges: Vec<(i64, i64)> = rules
            .iter()
            .map(|r| match r.traffic {
                Traffic::All => (0, 65535),
                Traffic::Tcp(from, to) => (from, to),
            })
            .collect();
        ranges.sort_unstable();
        let mut next = low;
        for (from, to) in ranges {
            if from <= next && to >= next {
                next = to + 1;
            }
        }
        next > high
    }

    /// Whether traffic from interfaces with the security groups `from` is
    /// let out of them and into interfaces with the groups `to`.
    fn reaches(&self, from: &[String], to: &[String], traffic: Traffic) -> bool {
        let everywhere = if self.ipv6 { "::/0" } else { "0.0.0.0/0" };
        let egress: Vec<&Rule> = self
            .rules
            .iter()
            .filter(|r| !r.ingress && from.contains(&r.group))
            .filter(|r| match &r.peer {
                Peer::Group(group) => to.contains(group),
                Peer::Cidr(cidr) => cidr == everywhere,
            })
            .collect();
        // EC2's default egress is IPv4 only; the cluster security group's
        // is both families.
        let default_out = from.contains(&self.cluster)
            || (!self.ipv6 && from.iter().any(|g| self.default_egress.contains(g)));
        let out = default_out || self.allows(&egress, traffic);
        let ingress: Vec<&Rule> = self
            .rules
            .iter()
            .filter(|r| r.ingress && to.contains(&r.group))
            .filter(|r| matches!(&r.peer, Peer::Group(group) if from.contains(group)))
            .collect();
        let cluster_self = from.contains(&self.cluster) && to.contains(&self.cluster);
        out && (cluster_self || self.allows(&ingress, traffic))
    }

    /// Every path the invariant needs that the security groups do not
    /// open, in words.
    fn cuts(&self, control_plane: &[String]) -> Vec<String> {
        let mut cuts = Vec::new();
        for (from, from_groups) in &self.nodes {
            for (to, to_groups) in &self.nodes {
                if !self.reaches(from_groups, to_groups, Traffic::All) {
                    cuts.push(format!("{from} -> {to}: all traffic"));
                }
            }
        }
        let to_nodes = [
            Traffic::Tcp(443, 443),
            Traffic::Tcp(10250, 10250),
            Traffic::Tcp(1025, 65535),
        ];
        for (nodes, groups) in &self.nodes {
            for traffic in to_nodes {
                if !self.reaches(control_plane, groups, traffic) {
                    cuts.push(format!("control plane -> {nodes}: {traffic:?}"));
                }
            }
            if !self.reaches(groups, control_plane, Traffic::Tcp(443, 443)) {
                cuts.push(format!("{nodes} -> control plane: tcp 443"));
            }
        }
        cuts
    }
}

/// The control plane's interfaces carry the cluster security group and the
/// security group given at the cluster's creation.
fn control_plane(cluster: &str) -> Vec<String> {
    vec![literal(CONTROL_PLANE), cluster.to_string()]
}

/// The template of a one-stack blueprint, judged: every path is open.
fn assert_reachable(text: &str, cluster: &str, ipv6: bool) -> Template {
    let [template] = <[Template; 1]>::try_from(synthesize(text)).expect("one stack");
    let model = Model::of(&template, cluster, ipv6);
    assert!(!model.nodes.is_empty(), "no launch template");
    let cuts = model.cuts(&control_plane(cluster));
    assert!(cuts.is_empty(), "paths the security groups cut:\n{cuts:#?}");
    template
}

/// The two rules between the node security group and the cluster security
/// group `cluster`, each all traffic from the other.
fn assert_rules_between(template: &Template, cluster: &Expr) {
    let nodes = Expr::reference("NodeSecurityGroup");
    for (id, group, source) in [
        (
            "NodeSecurityGroupFromClusterSecurityGroupIngress",
            &nodes,
            cluster,
        ),
        (
            "ClusterSecurityGroupFromNodeSecurityGroupIngress",
            cluster,
            &nodes,
        ),
    ] {
        let rule = template
            .resources
            .get(id)
            .unwrap_or_else(|| panic!("no {id}"));
        assert_eq!(rule.kind, "AWS::EC2::SecurityGroupIngress");
        assert_eq!(rule.properties.get("GroupId"), Some(group), "{id}");
        assert_eq!(
            rule.properties.get("SourceSecurityGroupId"),
            Some(source),
            "{id}"
        );
        assert_eq!(
            rule.properties.get("IpProtocol"),
            Some(&Expr::str("-1")),
            "{id}"
        );
        assert!(!rule.properties.contains_key("FromPort"), "{id}");
    }
}

fn assert_no_rules_between(template: &Template) {
    for id in [
        "NodeSecurityGroupFromClusterSecurityGroupIngress",
        "ClusterSecurityGroupFromNodeSecurityGroupIngress",
    ] {
        assert!(!template.resources.contains_key(id), "{id} is there");
    }
}

const SELF_MANAGED_MIX: &str = "nodeGroups:
  - name: on-cluster
    instanceType: m6i.large
    maxSize: 3
    nodeSecurityGroup: cluster
  - name: shared
    instanceType: m6i.large
    maxSize: 3
";

#[test]
fn a_group_on_the_cluster_security_group_and_one_on_the_node_security_group_reach_each_other() {
    let text = blueprint(&ipv4_cluster(), SELF_MANAGED_MIX);
    let template = assert_reachable(&text, &literal(CLUSTER), false);
    assert_rules_between(&template, &Expr::str(CLUSTER));
}

#[test]
fn the_model_sees_the_cut_when_the_rules_between_the_security_groups_are_gone() {
    let text = blueprint(&ipv4_cluster(), SELF_MANAGED_MIX);
    let [mut template] = <[Template; 1]>::try_from(synthesize(&text)).expect("one stack");
    template
        .resources
        .shift_remove("NodeSecurityGroupFromClusterSecurityGroupIngress");
    template
        .resources
        .shift_remove("ClusterSecurityGroupFromNodeSecurityGroupIngress");
    let cuts =
        Model::of(&template, &literal(CLUSTER), false).cuts(&control_plane(&literal(CLUSTER)));
    assert_eq!(
        cuts,
        [
            "OnClusterLaunchTemplate -> SharedLaunchTemplate: all traffic",
            "SharedLaunchTemplate -> OnClusterLaunchTemplate: all traffic",
        ]
    );
}

#[test]
fn a_managed_group_whose_launch_template_names_the_node_security_group_reaches_one_on_the_cluster_security_group()
 {
    // The managed group's launch template names the node security group,
    // so EKS does not add the cluster security group to its nodes.
    let groups = "nodeGroups:
  - name: on-cluster
    instanceType: m6i.large
    maxSize: 3
    nodeSecurityGroup: cluster
managedNodeGroups:
  - name: managed
    instanceTypes: [m6i.large]
    maxSize: 3
";
    let template = assert_reachable(
        &blueprint(&ipv4_cluster(), groups),
        &literal(CLUSTER),
        false,
    );
    let data = &template.resources["ManagedLaunchTemplate"].properties["LaunchTemplateData"];
    assert_eq!(
        field_of(data, "SecurityGroupIds"),
        Some(&Expr::list([Expr::reference("NodeSecurityGroup")]))
    );
    assert_rules_between(&template, &Expr::str(CLUSTER));
}

#[test]
fn managed_groups_on_either_security_group_with_ssh_rules_and_extra_groups_reach_each_other() {
    let groups = "managedNodeGroups:
  - name: on-cluster
    instanceTypes: [m6i.large]
    maxSize: 3
    nodeSecurityGroup: cluster
    securityGroups: [sg-0aaaaaaaaaaaaaaaa]
  - name: shared
    instanceTypes: [m6i.large]
    maxSize: 3
    keyName: ops
    ssh: {sourceCidrs: [10.0.0.0/16]}
    securityGroupRules:
      - {protocol: tcp, ports: 8080, source: 10.0.0.0/16}
nodeGroups:
  - name: self-on-cluster
    instanceType: m6i.large
    maxSize: 3
    nodeSecurityGroup: cluster
    keyName: ops
    ssh: {sourceSecurityGroups: [sg-0bbbbbbbbbbbbbbbb]}
";
    let template = assert_reachable(
        &blueprint(&ipv4_cluster(), groups),
        &literal(CLUSTER),
        false,
    );
    assert_rules_between(&template, &Expr::str(CLUSTER));
}

#[test]
fn an_efa_group_on_the_node_security_group_reaches_a_group_on_the_cluster_security_group() {
    // The EFA group's security groups are on its network interfaces.
    let groups = "nodeGroups:
  - name: efa
    instanceType: c6in.32xlarge
    minSize: 0
    maxSize: 2
    efa: true
  - name: on-cluster
    instanceType: m6i.large
    maxSize: 3
    nodeSecurityGroup: cluster
";
    let template = assert_reachable(
        &blueprint(&ipv4_cluster(), groups),
        &literal(CLUSTER),
        false,
    );
    assert_rules_between(&template, &Expr::str(CLUSTER));
}

#[test]
fn on_an_ipv6_cluster_groups_on_either_security_group_reach_each_other() {
    let cluster = format!(
        "  ipFamily: ipv6
  serviceIpv6Cidr: fd00:ab12::/108
  controlPlaneSecurityGroup: {CONTROL_PLANE}
  clusterSecurityGroup: {CLUSTER}
"
    );
    let template = assert_reachable(
        &blueprint(&cluster, SELF_MANAGED_MIX),
        &literal(CLUSTER),
        true,
    );
    assert_rules_between(&template, &Expr::str(CLUSTER));
}

#[test]
fn the_rules_name_a_cluster_security_group_given_as_a_parameter_or_an_import() {
    for (written, expr) in [
        (
            "{parameter: ClusterSecurityGroup}",
            Expr::reference("ClusterSecurityGroup"),
        ),
        (
            "{import: platform-ClusterSecurityGroup}",
            Expr::import_value(Expr::str("platform-ClusterSecurityGroup")),
        ),
    ] {
        let cluster = format!(
            "  serviceIpv4Cidr: 10.100.0.0/16
  controlPlaneSecurityGroup: {CONTROL_PLANE}
  clusterSecurityGroup: {written}
"
        );
        let template = assert_reachable(&blueprint(&cluster, SELF_MANAGED_MIX), &key(&expr), false);
        assert_rules_between(&template, &expr);
    }
}

#[test]
fn groups_all_on_the_node_security_group_need_no_rule_with_the_cluster_security_group() {
    // The cluster security group is written, but no node is on it.
    let groups = "nodeGroups:
  - name: self-managed
    instanceType: m6i.large
    maxSize: 3
    keyName: ops
    ssh: {sourceCidrs: [10.0.0.0/16]}
managedNodeGroups:
  - name: managed
    instanceTypes: [m6i.large]
    maxSize: 3
    securityGroups: [sg-0aaaaaaaaaaaaaaaa]
";
    let template = assert_reachable(
        &blueprint(&ipv4_cluster(), groups),
        &literal(CLUSTER),
        false,
    );
    assert_no_rules_between(&template);
}

#[test]
fn groups_all_on_the_cluster_security_group_need_no_node_security_group() {
    // More `defaults`: the common ones name the subnets.
    let groups = "  nodeSecurityGroup: cluster
nodeGroups:
  - name: self-managed
    instanceType: m6i.large
    maxSize: 3
managedNodeGroups:
  - name: managed
    instanceTypes: [m6i.large]
    maxSize: 3
";
    let template = assert_reachable(
        &blueprint(&ipv4_cluster(), groups),
        &literal(CLUSTER),
        false,
    );
    assert!(!template.resources.contains_key("NodeSecurityGroup"));
    assert_no_rules_between(&template);
}

#[test]
fn with_a_stack_per_group_the_rules_live_beside_the_node_security_group() {
    let text = blueprint(
        &ipv4_cluster(),
        &format!("stacks: perGroup\n{SELF_MANAGED_MIX}"),
    );
    let stacks = synthesize(&text);
    let main = &stacks[0];
    assert!(main.resources.contains_key("NodeSecurityGroup"));
    assert_rules_between(main, &Expr::str(CLUSTER));
}
