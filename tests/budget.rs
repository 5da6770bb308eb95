//! How many bytes eksynth spends: of the 16 KB of user data EC2 allows a
//! node, and of the 51,200 bytes an inline `aws cloudformation deploy`
//! sends. Each test prints what it measured (`cargo test --test budget --
//! --nocapture`) and fails when a budget is passed.

use eksynth::compile::compile;
use eksynth::eks::userdata::*;
use eksynth::source::SourceFile;

#[path = "common/user_data.rs"]
mod user_data;

/// A cluster value as `SubBuilder` makes it: CloudFormation fills it in,
/// and what it holds is the cluster's, not eksynth's.
fn placeholder(n: u32) -> String {
    format!("\u{1}{n}\u{1}")
}

/// A self-managed AL2023 group with nothing of the user's own, every
/// cluster and stack value a placeholder.
fn plain_al2023() -> UserDataInput {
    let base = user_data::self_managed(Bootstrap::Al2023);
    let signal = base.signal.clone().map(|signal| Signal {
        stack_name: placeholder(5),
        logical_id: "GeneralNodeGroup".into(),
        region: placeholder(6),
        url_suffix: placeholder(7),
        ..signal
    });
    UserDataInput {
        cluster_name: placeholder(0),
        api_server_endpoint: placeholder(1),
        certificate_authority: placeholder(2),
        service_ipv4_cidr: Some(placeholder(3)),
        dns_cluster_ip: placeholder(4),
        signal,
        ..base
    }
}

/// The size of rendered user data with every template value left out.
fn own_bytes(input: &UserDataInput) -> usize {
    let text = render(input).expect("renders");
    let values: usize = text
        .split('\u{1}')
        .enumerate()
        .filter(|(i, _)| i % 2 == 1)
        .map(|(_, value)| value.len() + 2)
        .sum();
    text.len() - values
}

#[test]
fn a_plain_al2023_groups_own_user_data_fits_in_4000_bytes() {
    let bytes = own_bytes(&plain_al2023());
    eprintln!("plain self-managed AL2023 user data: {bytes} bytes of eksynth's own");
    assert!(bytes <= 4_000, "{bytes} bytes");
}

/// The budget table of the book's user-data chapter: what each family's plain self-managed user
/// data leaves of the 16 KB.
#[test]
fn every_familys_own_user_data_leaves_most_of_16_kb() {
    for (bootstrap, budget) in [
        (Bootstrap::Al2023, 4_000),
        (Bootstrap::Al2, 4_000),
        (Bootstrap::Bottlerocket, 1_000),
        (Bootstrap::Windows, 7_500),
    ] {
        let input = UserDataInput {
            bootstrap,
            ..plain_al2023()
        };
        let bytes = own_bytes(&input);
        eprintln!(
            "{bootstrap:?}: {bytes} bytes of eksynth's own, {} left of 16,384",
            16_384 - bytes
        );
        assert!(bytes <= budget, "{bootstrap:?}: {bytes} bytes");
    }
}

/// An Ubuntu node signs its own signal (Canonical's images carry no
/// cfn-signal), so its user data carries the embedded signaller.
#[test]
fn a_plain_ubuntu_groups_own_user_data_with_its_signaller_fits_in_8500_bytes() {
    let mut input = UserDataInput {
        bootstrap: Bootstrap::Ubuntu,
        ..plain_al2023()
    };
    if let Some(signal) = &mut input.signal {
        signal.client = SignalClient::Embedded;
        signal.kubelet_unit = "snap.kubelet-eks.daemon.service".into();
    }
    let bytes = own_bytes(&input);
    eprintln!(
        "Ubuntu: {bytes} bytes of eksynth's own, {} left of 16,384",
        16_384 - bytes
    );
    assert!(bytes <= 8_500, "{bytes} bytes");
}

/// A warm pool adds the wait for InService and the unit that joins once
/// the instance is in service (on AL2 also the join script itself).
#[test]
fn with_a_warm_pool_it_fits_in_6500_bytes() {
    for bootstrap in [Bootstrap::Al2023, Bootstrap::Al2] {
        let input = UserDataInput {
            bootstrap,
            warm_pool: true,
            ..plain_al2023()
        };
        let bytes = own_bytes(&input);
        eprintln!("{bootstrap:?} with a warm pool: {bytes} bytes of eksynth's own");
        assert!(bytes <= 6_500, "{bootstrap:?}: {bytes} bytes");
    }
}

#[test]
fn with_the_pod_imds_block_and_an_efs_mount_it_fits_in_6000_bytes() {
    let mut input = plain_al2023();
    input.block_pod_imds = true;
    input.efs_mounts = vec![EfsMount {
        file_system_id: "fs-0123456789abcdef0".into(),
        mount_point: "/mnt/efs".into(),
        dns_name: format!(
            "fs-0123456789abcdef0.efs.{}.{}",
            placeholder(6),
            placeholder(7)
        ),
    }];
    let bytes = own_bytes(&input);
    eprintln!(
        "self-managed AL2023 user data with the pod IMDS block and one EFS mount: {bytes} bytes"
    );
    assert!(bytes <= 6_000, "{bytes} bytes");
}

#[test]
fn the_quickstart_template_fits_in_13000_bytes() {
    let committed = std::fs::read_to_string("examples/quickstart/quickstart.yaml")
        .expect("the committed quickstart template");
    eprintln!(
        "examples/quickstart/quickstart.yaml: {} bytes",
        committed.len()
    );
    assert!(committed.len() <= 13_000, "{} bytes", committed.len());
}

#[test]
fn four_self_managed_groups_with_access_entries_deploy_inline() {
    let mut text = String::from(
        "apiVersion: eksynth.io/v1
kind: NodeBlueprint
cluster:
  name: demo
  kubernetesVersion: \"1.33\"
  endpoint: https://0123456789ABCDEF0123456789ABCDEF.gr7.eu-west-1.eks.amazonaws.com
  certificateAuthority: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUMvakNDQWVhZ0F3SUJBZ0lCQURBTkJna3Foa2lHOXcwQkFRc0ZBREFWTVJNd0VRWURWUVFERXdwcmRXSmwKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=
  serviceIpv4Cidr: 10.100.0.0/16
  controlPlaneSecurityGroup: sg-0123456789abcdef0
  vpc: vpc-0123456789abcdef0
  authenticationMode: API
defaults:
  instanceType: m6i.large
  maxSize: 3
  subnets: [subnet-0123456789abcdef0, subnet-0123456789abcdef1]
nodeGroups:
",
    );
    for name in ["general", "system", "batch", "ingress"] {
        text.push_str(&format!("  - name: {name}\n"));
    }
    let file = SourceFile::new("four-groups.yaml", text);
    let compiled = compile(&file).expect("compiles");
    assert!(!compiled.has_errors());
    assert_eq!(compiled.stacks.len(), 1);
    let template = &compiled.main().text;
    assert_eq!(template.matches("Type: AWS::EKS::AccessEntry").count(), 4);
    eprintln!("four self-managed AL2023 groups: {} bytes", template.len());
    assert!(template.len() <= 51_200, "{} bytes", template.len());
}

/// `text` as CloudFormation fills it in, each template value of
/// `plain_al2023` replaced by text of the size it is budgeted at: the
/// cluster name (100), endpoint (80), CA data (1,500), service CIDR (18),
/// DNS IP (39), stack name (128), region and URL suffix (16).
fn filled_in(text: &str) -> String {
    [100, 80, 1_500, 18, 39, 128, 16, 16]
        .iter()
        .enumerate()
        .fold(text.to_string(), |text, (n, bytes)| {
            text.replace(&placeholder(n as u32), &"x".repeat(*bytes))
        })
}

/// A blueprint whose CA comes from a parameter is measured with a real
/// cluster's CA, not with nothing in its place.
#[test]
fn cluster_values_given_at_deploy_time_are_counted_at_their_real_size() {
    let input = plain_al2023();
    let text = render(&input).expect("renders");
    let measured = measured_len(&text, &input);
    eprintln!(
        "plain self-managed AL2023 user data: {measured} bytes with cluster values at their real size"
    );
    assert_eq!(measured, filled_in(&text).len());
    assert!(measured >= own_bytes(&input) + 1_500 + 80 + 100);
}

/// A MIME part with non-ASCII text is sent base64: it is counted as EC2
/// receives it, four bytes for every three.
#[test]
fn a_part_sent_base64_is_counted_encoded() {
    let mut input = plain_al2023();
    input.pre_bootstrap_commands = vec![format!(
        "echo '{}' >> /etc/motd",
        "Grüße ✓ 漢字 ".repeat(200)
    )];
    let text = render(&input).expect("renders");
    let encoded: usize = filled_in(&text)
        .split(ENCODED)
        .enumerate()
        .map(|(i, piece)| match i % 2 {
            0 => piece.len(),
            _ => piece.len().div_ceil(3) * 4,
        })
        .sum();
    let measured = measured_len(&text, &input);
    eprintln!(
        "with {} bytes of non-ASCII text: {measured} bytes as sent",
        200 * "Grüße ✓ 漢字 ".len()
    );
    assert!(text.contains(ENCODED));
    assert_eq!(measured, encoded);
    // The encoded part holds the 3,800 bytes of text, and a third more.
    assert!(measured >= filled_in(&text).len() + 3_800 / 3);
}
