//! Every template synthesized from a valid blueprint validates clean: the
//! blueprints here are generated, with random groups, sizes, labels, taints,
//! instance types, AMI families, volumes and cluster values, in one stack or
//! a stack per group.

use std::fmt::Write;

use eksynth::compile::compile;
use eksynth::source::SourceFile;
use proptest::prelude::*;

const INSTANCE_TYPES: &[&str] = &[
    "m6i.large",
    "m7g.xlarge",
    "c6a.2xlarge",
    "r6gd.large",
    "g5.xlarge",
    "t3.medium",
];
const EFFECTS: &[&str] = &["NoSchedule", "PreferNoSchedule", "NoExecute", "NO_SCHEDULE"];

#[derive(Debug, Clone)]
struct Group {
    instance_types: Vec<&'static str>,
    al2: bool,
    min: u32,
    extra: u32,
    desired: Option<u32>,
    labels: Vec<(String, String)>,
    taints: Vec<(String, Option<String>, &'static str)>,
    max_pods: Option<u32>,
    volume: Option<(u32, u32, u32)>,
    block_pods: bool,
    efs: bool,
    ssm: bool,
    irsa: bool,
    autoscaler: bool,
    commands: Vec<String>,
}

fn label_part() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9-]{0,10}[a-z0-9]"
}

fn group() -> impl Strategy<Value = Group> {
    let architecture = prop_oneof![
        Just(vec!["m6i.large"]),
        Just(vec!["m7g.xlarge"]),
        Just(vec!["c6a.2xlarge", "m6i.large"]),
        Just(vec!["m7g.xlarge", "r6gd.large"]),
        (0..INSTANCE_TYPES.len()).prop_map(|i| vec![INSTANCE_TYPES[i]])
    ];
    (
        architecture,
        any::<bool>(),
        (0u32..4, 1u32..6, proptest::option::of(0u32..3)),
        proptest::collection::vec((label_part(), "[a-z0-9]{0,8}"), 0..4),
        proptest::collection::vec(
            (
                label_part(),
                proptest::option::of("[a-z0-9]{1,8}"),
                0..EFFECTS.len(),
            ),
            0..3,
        ),
        // At most what every generated instance type's network interfaces
        // address (17 for `t3.medium`, the smallest).
        proptest::option::of(10u32..=17),
        // A gp3 volume within EC2's limits: at most 500 IOPS per GiB above
        // the 3,000 baseline, and 1 MiB/s per 4 IOPS.
        proptest::option::of((20u32..500).prop_flat_map(|size| {
            (3000u32..=(500 * size).clamp(3000, 16000)).prop_flat_map(move |iops| {
                (125u32..=(iops / 4).min(1000)).prop_map(move |throughput| (size, iops, throughput))
            })
        })),
        (
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
        ),
        proptest::collection::vec("[a-z ]{1,20}", 0..3),
    )
        .prop_map(
            |(
                instance_types,
                al2,
                (min, extra, desired),
                labels,
                taints,
                max_pods,
                volume,
                flags,
                commands,
            )| Group {
                instance_types,
                al2,
                min,
                extra,
                desired: desired.map(|d| min + d.min(extra)),
                labels,
                // One taint per key: the cluster autoscaler's node-template
                // tag describes one.
                taints: taints
                    .into_iter()
                    .scan(std::collections::HashSet::new(), |seen, (k, v, e)| {
                        Some(seen.insert(k.clone()).then_some((k, v, EFFECTS[e])))
                    })
                    .flatten()
                    .collect(),
                max_pods,
                volume,
                block_pods: flags.0,
                efs: flags.1,
                ssm: flags.2,
                irsa: flags.3,
                autoscaler: flags.4,
                commands: commands
                    .into_iter()
                    .map(|c| format!("echo '{c}'"))
                    .collect(),
            },
        )
}

fn cluster(parameters: bool) -> String {
    if parameters {
        "cluster:\n  name: {parameter: ClusterName}\n  kubernetesVersion: \"1.32\"\n  endpoint: {parameter: Endpoint}\n  certificateAuthority: {import: platform-CA}\n  serviceIpv4Cidr: {parameter: ServiceCidr, default: 10.100.0.0/16}\n  controlPlaneSecurityGroup: {parameter: ControlPlaneSG}\n  vpc: {import: network-Vpc}\n".to_string()
    } else {
        "cluster:\n  name: demo\n  kubernetesVersion: \"1.32\"\n  endpoint: https://ABC.gr7.eu-west-1.eks.amazonaws.com\n  certificateAuthority: Y2VydA==\n  serviceIpv4Cidr: 172.20.0.0/16\n  controlPlaneSecurityGroup: sg-0123456789abcdef0\n  vpc: vpc-0123456789abcdef0\n".to_string()
    }
}

fn blueprint(groups: &[Group], parameters: bool, per_group: bool) -> String {
    let mut out = String::from("apiVersion: eksynth.io/v1\nkind: NodeBlueprint\n");
    if per_group {
        out.push_str("stacks: perGroup\n");
    }
    out.push_str(&cluster(parameters));
    out.push_str(
        "defaults:\n  subnets: [subnet-0123456789abcdef0, subnet-0123456789abcdef1]\nnodeGroups:\n",
    );
    for (i, g) in groups.iter().enumerate() {
        let _ = writeln!(out, "  - name: group-{i}");
        let _ = writeln!(out, "    instanceTypes: [{}]", g.instance_types.join(", "));
        if g.al2 {
            out.push_str("    amiFamily: AmazonLinux2\n");
        }
        let _ = writeln!(
            out,
            "    minSize: {}\n    maxSize: {}",
            g.min,
            g.min + g.extra
        );
        if let Some(d) = g.desired {
            let _ = writeln!(out, "    desiredCapacity: {d}");
        }
        if !g.labels.is_empty() {
            out.push_str("    labels:\n");
            for (k, v) in &g.labels {
                let _ = writeln!(out, "      example.com/{k}: \"{v}\"");
            }
        }
        if !g.taints.is_empty() {
            out.push_str("    taints:\n");
            for (k, v, e) in &g.taints {
                match v {
                    Some(v) => {
                        let _ = writeln!(out, "      - {{key: {k}, value: \"{v}\", effect: {e}}}");
                    }
                    None => {
                        let _ = writeln!(out, "      - {{key: {k}, effect: {e}}}");
                    }
                }
            }
        }
        if let Some(p) = g.max_pods {
            let _ = writeln!(out, "    maxPods: {p}");
        }
        if let Some((size, iops, throughput)) = g.volume {
            let _ = writeln!(
                out,
                "    rootVolume: {{size: {size}, type: gp3, iops: {iops}, throughput: {throughput}}}"
            );
        }
        if g.block_pods {
            out.push_str("    imds: {blockPods: true}\n");
        }
        if g.efs {
            out.push_str(
                "    efsMounts: [{fileSystemId: fs-0123456789abcdef0, mountPoint: /mnt/shared}]\n",
            );
        }
        let _ = writeln!(
            out,
            "    iam: {{ssmManagedInstance: {}, cniUsesIrsa: {}}}",
            g.ssm, g.irsa
        );
        let _ = writeln!(out, "    clusterAutoscaler: {}", g.autoscaler);
        if !g.commands.is_empty() {
            out.push_str("    preBootstrapCommands:\n");
            for c in &g.commands {
                let _ = writeln!(out, "      - \"{c}\"");
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn templates_of_generated_valid_blueprints_validate_clean(
        groups in proptest::collection::vec(group(), 1..4),
        parameters in any::<bool>(),
        per_group in any::<bool>(),
    ) {
        let text = blueprint(&groups, parameters, per_group);
        let file = SourceFile::new("generated.yaml", text.clone());
        let compiled = compile(&file).map_err(|e| {
            let rendered = match &e {
                eksynth::compile::CompileError::Blueprint(d) => d.iter().map(|d| d.render()).collect::<Vec<_>>().join("\n"),
                other => other.to_string(),
            };
            TestCaseError::fail(format!("{rendered}\n--- blueprint ---\n{text}"))
        })?;
        // Size advice depends only on how many groups were generated.
        let rendered: Vec<String> = compiled
            .diagnostics
            .iter()
            .filter(|d| d.code != Some("I3005"))
            .map(|d| d.render())
            .collect();
        prop_assert!(rendered.is_empty(), "{}\n--- blueprint ---\n{}", rendered.join("\n"), text);
        // Split per group, each group is a stack besides the main one.
        let stacks = if per_group { groups.len() + 1 } else { 1 };
        prop_assert_eq!(compiled.stacks.len(), stacks);
    }
}
