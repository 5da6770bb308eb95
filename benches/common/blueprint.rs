//! The benchmark blueprint, shared by the benches: varied self-managed
//! node groups, as many as asked for.

use std::fmt::Write as _;

const X86_TYPES: &[&str] = &[
    "m6i.large",
    "c6i.xlarge",
    "r6i.large",
    "m5.xlarge",
    "t3.medium",
    "c5.2xlarge",
];
const ARM_TYPES: &[&str] = &["m7g.large", "c7g.xlarge", "r7g.large", "m6g.xlarge"];
const EFFECTS: &[&str] = &["NoSchedule", "PreferNoSchedule", "NoExecute"];

/// A blueprint with `groups` varied node groups on Kubernetes 1.32 (so AL2
/// is still allowed): AL2023 and AL2, x86 and Graviton, single and mixed
/// instance types, labels, taints, kubelet settings, EFS mounts,
/// pre-bootstrap commands, the pod IMDS block, tags, and cluster values as
/// template parameters.
pub fn blueprint(groups: usize) -> String {
    let mut y = String::new();
    y.push_str(
        "apiVersion: eksynth.io/v1
kind: NodeBlueprint
description: generated benchmark blueprint
cluster:
  name: {parameter: ClusterName}
  kubernetesVersion: \"1.32\"
  endpoint: {parameter: ClusterEndpoint}
  certificateAuthority: {parameter: ClusterCertificateAuthority}
  serviceIpv4Cidr: {parameter: ClusterServiceIpv4Cidr, default: 10.100.0.0/16}
  controlPlaneSecurityGroup: {parameter: ClusterControlPlaneSecurityGroup}
  vpc: {parameter: VpcId}
  prefixDelegation: true
defaults:
  subnets: {parameter: Subnets}
  tags:
    cost-center: \"4711\"
    owner: platform
  iam:
    ssmManagedInstance: true
nodeGroups:
",
    );
    for i in 0..groups {
        let arm = i % 5 == 4;
        let types = if arm { ARM_TYPES } else { X86_TYPES };
        let al2 = i % 3 == 1;
        let min = i % 3;
        let max = min + 3 + i % 7;
        let _ = writeln!(y, "  - name: ng-{i:03}");
        if al2 {
            y.push_str("    amiFamily: AmazonLinux2\n");
        } else if i % 2 == 0 {
            y.push_str("    amiFamily: AmazonLinux2023\n");
        }
        if i % 4 == 2 {
            let _ = writeln!(
                y,
                "    instanceTypes: [{}, {}, {}]",
                types[i % types.len()],
                types[(i + 1) % types.len()],
                types[(i + 2) % types.len()]
            );
        } else {
            let _ = writeln!(y, "    instanceType: {}", types[i % types.len()]);
        }
        let _ = writeln!(y, "    minSize: {min}\n    maxSize: {max}");
        if i % 2 == 1 {
            let _ = writeln!(y, "    desiredCapacity: {}", min + 1);
        }
        if i % 3 == 2 {
            let _ = writeln!(
                y,
                "    subnets: [subnet-0a1b2c3d4e5f6{i:04}, subnet-0a1b2c3d4e5f7{i:04}]"
            );
        }
        let _ = writeln!(
            y,
            "    labels:\n      team: team-{}\n      example.com/pool: pool-{i}\n      workload: {}",
            i % 5,
            if i % 2 == 0 { "web" } else { "batch" }
        );
        if i % 3 == 0 {
            let _ = writeln!(
                y,
                "    taints:\n      - {{key: dedicated, value: pool-{i}, effect: {}}}",
                EFFECTS[i % EFFECTS.len()]
            );
            if i % 2 == 0 {
                y.push_str("      - {key: spot, effect: PreferNoSchedule}\n");
            }
        }
        if i % 4 == 1 {
            let _ = writeln!(y, "    maxPods: {}", 29 + i % 80);
        }
        if i % 5 == 3 {
            y.push_str(
                "    kubelet:\n      imageGCHighThresholdPercent: 80\n      imageGCLowThresholdPercent: 60\n      podPidsLimit: 4096\n",
            );
        }
        if i % 2 == 0 {
            y.push_str("    imds:\n      blockPods: true\n");
        }
        if i % 2 == 1 {
            let _ = writeln!(
                y,
                "    preBootstrapCommands:\n      - echo \"preparing $(hostname) for ng-{i:03}\" >> /var/log/prepare.log\n      - sysctl -w net.core.somaxconn=4096"
            );
        }
        if i % 4 == 0 {
            let _ = writeln!(
                y,
                "    efsMounts:\n      - fileSystemId: fs-0123456789abc{i:04}\n        mountPoint: /mnt/efs-{i}"
            );
        }
        let _ = writeln!(y, "    tags:\n      group-index: \"{i}\"");
        if i % 6 == 5 {
            y.push_str("    updatePolicy:\n      maxBatchSize: 2\n      pauseTime: PT5M\n");
        }
    }
    y
}
