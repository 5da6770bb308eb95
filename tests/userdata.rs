//! User data rendering: golden snapshots for every AMI family and mode, MIME
//! structure, NodeConfig content, Bottlerocket TOML, the Windows script,
//! shell syntax and quoting round trips through a real bash (and PowerShell,
//! when `pwsh` is installed).

use std::process::{Command, Stdio};

use eksynth::eks::userdata::*;
use proptest::prelude::*;
use serde_json::{Value, json};

mod common;

/// Placeholders as `cfn::sub::SubBuilder` makes them, and the values
/// CloudFormation would put in their place.
const CLUSTER: &str = "\u{1}0\u{1}";
const ENDPOINT: &str = "\u{1}1\u{1}";
const CA: &str = "\u{1}2\u{1}";
const REGION: &str = "\u{1}3\u{1}";
const URL_SUFFIX: &str = "\u{1}4\u{1}";
const STACK: &str = "\u{1}5\u{1}";
const RESOLVED: &[(&str, &str)] = &[
    (CLUSTER, "staging"),
    (
        ENDPOINT,
        "https://0123456789ABCDEF.gr7.eu-west-1.eks.amazonaws.com",
    ),
    (CA, "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg=="),
    (REGION, "eu-west-1"),
    (URL_SUFFIX, "amazonaws.com"),
    (STACK, "staging-nodes"),
];

const LOGICAL_ID: &str = "Staging1AutoScalingGroup";

fn sample(bootstrap: Bootstrap) -> UserDataInput {
    UserDataInput {
        bootstrap,
        mode: Mode::SelfManaged,
        cluster_name: CLUSTER.into(),
        api_server_endpoint: ENDPOINT.into(),
        certificate_authority: CA.into(),
        service_ipv4_cidr: Some("10.100.0.0/16".into()),
        service_ipv6_cidr: None,
        dns_cluster_ip: "10.100.0.10".into(),
        cluster_dns: Vec::new(),
        labels: vec![label("env", "staging"), label("unmanaged-node", "true")],
        taints: vec![
            taint("staging-only", Some("true"), "PreferNoSchedule"),
            taint("dedicated", None, "NoSchedule"),
        ],
        max_pods: Some(58),
        kubelet_config: vec![
            ("imageGCHighThresholdPercent".into(), json!(70)),
            ("imageGCLowThresholdPercent".into(), json!(50)),
            (
                "evictionHard".into(),
                json!({"memory.available": "200Mi", "nodefs.available": "10%"}),
            ),
        ],
        node_config: None,
        pre_bootstrap_commands: vec![
            "yum install -y amazon-ssm-agent".into(),
            "echo \"node for ${HOSTNAME}\" > /etc/motd".into(),
        ],
        efs_mounts: vec![EfsMount {
            file_system_id: "fs-0123456789abcdef0".into(),
            mount_point: "/mnt/efs".into(),
            dns_name: format!("fs-0123456789abcdef0.efs.{REGION}.{URL_SUFFIX}"),
        }],
        user_data_parts: vec![],
        bottlerocket_settings: Default::default(),
        block_pod_imds: true,
        signal: Some(sample_signal()),
        bootstrap_arguments: None,
        instance_store_raid0: false,
        warm_pool: false,
    }
}

fn sample_signal() -> Signal {
    Signal {
        stack_name: STACK.into(),
        logical_id: LOGICAL_ID.into(),
        region: REGION.into(),
        url_suffix: URL_SUFFIX.into(),
        timeout_seconds: 900,
        client: SignalClient::Image,
        kubelet_unit: "kubelet.service".into(),
        post_bootstrap_commands: vec![],
    }
}

/// The signal of a custom image without `cfn-signal`.
fn sigv4_signal() -> Signal {
    Signal {
        client: SignalClient::Embedded,
        ..sample_signal()
    }
}

/// The smallest input: no labels, taints, settings, commands or mounts.
fn bare(bootstrap: Bootstrap) -> UserDataInput {
    UserDataInput {
        labels: vec![],
        taints: vec![],
        max_pods: None,
        kubelet_config: vec![],
        node_config: None,
        pre_bootstrap_commands: vec![],
        efs_mounts: vec![],
        block_pod_imds: false,
        ..sample(bootstrap)
    }
}

/// The input of a managed group: labels and taints go through the EKS API
/// and nothing signals.
fn managed(bootstrap: Bootstrap, mode: Mode) -> UserDataInput {
    let mut input = sample(bootstrap);
    input.mode = mode;
    input.labels = vec![];
    input.taints = vec![];
    input.signal = None;
    if bootstrap == Bootstrap::Al2 && mode == Mode::ManagedEksAmi {
        // EKS passes its own --max-pods to bootstrap.sh.
        input.max_pods = None;
    }
    input
}

/// Bottlerocket: settings only, no scripts; two taints on one key.
fn bottlerocket(mode: Mode) -> UserDataInput {
    let mut input = sample(Bootstrap::Bottlerocket);
    input.mode = mode;
    input.pre_bootstrap_commands = vec![];
    input.efs_mounts = vec![];
    input.block_pod_imds = false;
    input.taints.push(taint("staging-only", None, "NoExecute"));
    input.kubelet_config.extend([
        (
            "kubeReserved".into(),
            json!({"cpu": "250m", "memory": "1Gi"}),
        ),
        ("podPidsLimit".into(), json!(4096)),
        ("containerLogMaxSize".into(), json!("50Mi")),
    ]);
    if mode != Mode::SelfManaged {
        input.signal = None;
    }
    if mode == Mode::ManagedEksAmi {
        input.labels = vec![];
        input.taints = vec![];
    }
    input
}

/// Windows: PowerShell pre-bootstrap commands, no EFS, no IMDS block.
fn windows(mode: Mode) -> UserDataInput {
    let mut input = sample(Bootstrap::Windows);
    input.mode = mode;
    input.pre_bootstrap_commands = vec![
        "New-Item -ItemType Directory -Force -Path 'C:\\eksynth' | Out-Null".into(),
        "Set-Content -Path C:\\eksynth\\motd.txt -Value \"node for $env:COMPUTERNAME\"".into(),
    ];
    input.efs_mounts = vec![];
    input.block_pod_imds = false;
    if mode != Mode::SelfManaged {
        input.signal = None;
        input.labels = vec![];
        input.taints = vec![];
    }
    if mode == Mode::ManagedEksAmi {
        input.max_pods = None;
        input.kubelet_config = vec![];
    }
    input
}

fn label(key: &str, value: &str) -> Label {
    Label {
        key: key.into(),
        value: value.into(),
    }
}

fn taint(key: &str, value: Option<&str>, effect: &str) -> Taint {
    Taint {
        key: key.into(),
        value: value.map(Into::into),
        effect: effect.into(),
    }
}

fn render_ok(input: &UserDataInput) -> String {
    match render(input) {
        Ok(text) => text,
        Err(e) => panic!("render failed: {e}"),
    }
}

/// Placeholders made visible for snapshots: `\u{1}3\u{1}` becomes `<<3>>`.
fn visible(text: &str) -> String {
    let mut out = String::new();
    for (i, piece) in text.split('\u{1}').enumerate() {
        if i % 2 == 1 {
            out.push_str(&format!("<<{piece}>>"));
        } else {
            out.push_str(piece);
        }
    }
    out
}

/// What `Fn::Sub` would leave after CloudFormation substitutes the values.
fn resolved(text: &str) -> String {
    RESOLVED
        .iter()
        .fold(text.to_string(), |t, (from, to)| t.replace(from, to))
}

/// One part of a MIME document.
#[derive(Debug)]
struct MimePart {
    headers: Vec<(String, String)>,
    body: String,
}

impl MimePart {
    fn content_type(&self) -> &str {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("content-type"))
            .map(|(_, v)| v.as_str())
            .unwrap_or("")
    }
}

fn parse_headers(block: &str) -> Vec<(String, String)> {
    block
        .lines()
        .map(|line| {
            let (k, v) = line
                .split_once(':')
                .unwrap_or_else(|| panic!("not a header: {line:?}"));
            (k.trim().to_string(), v.trim().to_string())
        })
        .collect()
}

/// A strict little multipart/mixed reader: returns the boundary and the
/// parts, and checks the framing on the way.
fn parse_mime(doc: &str) -> (String, Vec<MimePart>) {
    let (head, body) = doc
        .split_once("\n\n")
        .expect("headers end with a blank line");
    let headers = parse_headers(head);
    assert!(headers.contains(&("MIME-Version".into(), "1.0".into())));
    let content_type = headers
        .iter()
        .find(|(k, _)| k == "Content-Type")
        .map(|(_, v)| v.clone())
        .expect("a Content-Type header");
    let boundary = content_type
        .strip_prefix("multipart/mixed; boundary=\"")
        .and_then(|rest| rest.strip_suffix('"'))
        .unwrap_or_else(|| panic!("not multipart/mixed: {content_type}"))
        .to_string();
    assert!(!boundary.is_empty() && boundary.len() <= 70);

    let delimiter = format!("--{boundary}");
    let close = format!("--{boundary}--");
    let mut parts: Vec<MimePart> = Vec::new();
    let mut current: Option<Vec<&str>> = None;
    let mut closed = false;
    for line in body.split('\n') {
        assert!(
            !closed || line.is_empty(),
            "text after the closing boundary: {line:?}"
        );
        if line == delimiter || line == close {
            if let Some(lines) = current.take() {
                parts.push(to_part(&lines));
            }
            if line == close {
                closed = true;
            } else {
                current = Some(Vec::new());
            }
        } else if let Some(lines) = current.as_mut() {
            lines.push(line);
        } else {
            assert!(line.is_empty(), "preamble: {line:?}");
        }
    }
    assert!(closed, "no closing boundary");
    for part in &parts {
        assert!(
            !part.body.contains(&boundary),
            "the boundary occurs inside a part"
        );
    }
    (boundary, parts)
}

fn to_part(lines: &[&str]) -> MimePart {
    let text = lines.join("\n");
    let (head, body) = text
        .split_once("\n\n")
        .expect("part headers end with a blank line");
    // The line break before a delimiter belongs to the delimiter (RFC 2046).
    let body = body.strip_suffix('\n').unwrap_or(body);
    MimePart {
        headers: parse_headers(head),
        body: body.to_string(),
    }
}

fn shell_parts(doc: &str) -> Vec<String> {
    parse_mime(doc)
        .1
        .into_iter()
        .filter(|p| p.content_type().starts_with("text/x-shellscript"))
        .map(|p| p.body)
        .collect()
}

fn nodeconfig(doc: &str) -> Value {
    let (_, parts) = parse_mime(doc);
    let part = parts
        .iter()
        .find(|p| p.content_type() == "application/node.eks.aws")
        .expect("a NodeConfig part");
    match serde_saphyr::from_str::<Value>(&resolved(&part.body)) {
        Ok(value) => value,
        Err(e) => panic!("NodeConfig is not YAML: {e}\n{}", part.body),
    }
}

/// The text between a heredoc start line ending in `<<'MARK'` and `MARK`.
fn heredoc(text: &str, mark: &str) -> String {
    let start_marker = format!("<<'{mark}'\n");
    let start = text.find(&start_marker).expect("heredoc start") + start_marker.len();
    let end_marker = format!("\n{mark}\n");
    let end = text[start - 1..].find(&end_marker).expect("heredoc end") + start - 1;
    text[start..=end].to_string()
}

fn have(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// Runs `bash -c script` and returns stdout split at NULs.
fn bash_words(script: &str) -> Vec<String> {
    let out = Command::new("bash")
        .arg("-c")
        .arg(script)
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "bash failed: {}\n{script}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let mut words: Vec<String> = text.split('\0').map(String::from).collect();
    assert_eq!(words.pop().as_deref(), Some(""), "output ends with a NUL");
    words
}

/// `bash -n` on the script, read from stdin so no temporary file is left.
fn bash_syntax_ok(name: &str, script: &str) {
    let Some(out) = common::run_installed(Command::new("bash").arg("-n"), script.as_bytes()) else {
        return;
    };
    assert!(
        out.status.success(),
        "{name} is not valid bash: {}\n{script}",
        String::from_utf8_lossy(&out.stderr)
    );
}

// ---------------------------------------------------------------- snapshots

#[test]
fn al2023_snapshot() {
    insta::assert_snapshot!(visible(&render_ok(&sample(Bootstrap::Al2023))));
}

#[test]
fn al2_snapshot() {
    insta::assert_snapshot!(visible(&render_ok(&sample(Bootstrap::Al2))));
}

/// A self-managed Ubuntu group: Canonical's bootstrap.sh, the kubelet
/// settings merged after it and the `kubelet-eks` snap restarted, and the
/// embedded signaller reading the snap's unit.
fn ubuntu() -> UserDataInput {
    UserDataInput {
        efs_mounts: vec![],
        signal: Some(Signal {
            kubelet_unit: "snap.kubelet-eks.daemon.service".into(),
            ..sigv4_signal()
        }),
        ..sample(Bootstrap::Ubuntu)
    }
}

#[test]
fn ubuntu_snapshot() {
    let doc = render_ok(&ubuntu());
    for (i, script) in shell_parts(&doc).iter().enumerate() {
        bash_syntax_ok(&format!("ubuntu-part{i}.sh"), script);
        bash_syntax_ok("ubuntu-signal.sh", &heredoc(script, "EKSYNTH_SIGNAL_EOF"));
        let restart = script
            .find("snap restart kubelet-eks")
            .expect("restarts the snap");
        assert!(
            script
                .find("/etc/eks/bootstrap.sh")
                .is_some_and(|at| at < restart)
        );
        assert!(
            !script.contains("kubelet.service.d"),
            "no kubelet.service drop-in"
        );
    }
    insta::assert_snapshot!(visible(&doc));
}

#[test]
fn ubuntu_refuses_what_canonicals_images_cannot_carry() {
    for input in [
        UserDataInput {
            warm_pool: true,
            ..ubuntu()
        },
        UserDataInput {
            instance_store_raid0: true,
            ..ubuntu()
        },
    ] {
        assert!(render(&input).is_err());
    }
}

#[test]
fn al2023_bare_snapshot() {
    insta::assert_snapshot!(visible(&render_ok(&bare(Bootstrap::Al2023))));
}

#[test]
fn al2_bare_snapshot() {
    insta::assert_snapshot!(visible(&render_ok(&bare(Bootstrap::Al2))));
}

#[test]
fn al2023_managed_eks_ami_snapshot() {
    insta::assert_snapshot!(visible(&render_ok(&managed(
        Bootstrap::Al2023,
        Mode::ManagedEksAmi
    ))));
}

#[test]
fn al2023_managed_custom_ami_snapshot() {
    insta::assert_snapshot!(visible(&render_ok(&managed(
        Bootstrap::Al2023,
        Mode::ManagedCustomAmi
    ))));
}

#[test]
fn al2_managed_eks_ami_snapshot() {
    insta::assert_snapshot!(visible(&render_ok(&managed(
        Bootstrap::Al2,
        Mode::ManagedEksAmi
    ))));
}

#[test]
fn al2_managed_custom_ami_snapshot() {
    let mut input = managed(Bootstrap::Al2, Mode::ManagedCustomAmi);
    input.bootstrap_arguments =
        Some("--enable-docker-bridge true --aws-api-retry-attempts 5".into());
    insta::assert_snapshot!(visible(&render_ok(&input)));
}

#[test]
fn bottlerocket_self_managed_snapshot() {
    insta::assert_snapshot!(visible(&render_ok(&bottlerocket(Mode::SelfManaged))));
}

#[test]
fn bottlerocket_managed_eks_ami_snapshot() {
    insta::assert_snapshot!(visible(&render_ok(&bottlerocket(Mode::ManagedEksAmi))));
}

#[test]
fn bottlerocket_managed_custom_ami_snapshot() {
    insta::assert_snapshot!(visible(&render_ok(&bottlerocket(Mode::ManagedCustomAmi))));
}

#[test]
fn windows_self_managed_snapshot() {
    insta::assert_snapshot!(visible(&render_ok(&windows(Mode::SelfManaged))));
}

#[test]
fn windows_managed_eks_ami_snapshot() {
    insta::assert_snapshot!(visible(&render_ok(&windows(Mode::ManagedEksAmi))));
}

#[test]
fn windows_managed_custom_ami_snapshot() {
    insta::assert_snapshot!(visible(&render_ok(&windows(Mode::ManagedCustomAmi))));
}

// ------------------------------------------------------------ MIME and YAML

#[test]
fn al2023_is_multipart_with_nodeconfig_then_script() {
    let doc = render_ok(&sample(Bootstrap::Al2023));
    let (boundary, parts) = parse_mime(&doc);
    assert_eq!(parts.len(), 2);
    assert_eq!(parts[0].content_type(), "application/node.eks.aws");
    assert!(parts[1].content_type().starts_with("text/x-shellscript"));
    assert!(parts[1].body.starts_with("#!/bin/bash\n"));
    for part in &parts {
        assert!(!part.body.contains(&boundary));
    }
}

#[test]
fn al2_is_multipart_with_one_script() {
    let doc = render_ok(&sample(Bootstrap::Al2));
    let (_, parts) = parse_mime(&doc);
    assert_eq!(parts.len(), 1);
    assert!(parts[0].content_type().starts_with("text/x-shellscript"));
    assert!(parts[0].body.starts_with("#!/bin/bash\n"));
}

#[test]
fn boundary_changes_when_a_part_contains_it() {
    let mut input = sample(Bootstrap::Al2023);
    input.pre_bootstrap_commands = vec!["echo ==EKSYNTH_BOUNDARY==".into()];
    let doc = render_ok(&input);
    let (boundary, parts) = parse_mime(&doc);
    assert_ne!(boundary, "==EKSYNTH_BOUNDARY==");
    assert!(parts[1].body.contains("echo ==EKSYNTH_BOUNDARY=="));
}

#[test]
fn nodeconfig_carries_cluster_kubelet_config_and_flags() {
    let config = nodeconfig(&render_ok(&sample(Bootstrap::Al2023)));
    assert_eq!(config["apiVersion"], "node.eks.aws/v1alpha1");
    assert_eq!(config["kind"], "NodeConfig");
    let cluster = &config["spec"]["cluster"];
    assert_eq!(cluster["name"], "staging");
    assert_eq!(
        cluster["apiServerEndpoint"],
        "https://0123456789ABCDEF.gr7.eu-west-1.eks.amazonaws.com"
    );
    assert_eq!(
        cluster["certificateAuthority"],
        "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg=="
    );
    assert_eq!(cluster["cidr"], "10.100.0.0/16");
    let kubelet = &config["spec"]["kubelet"];
    assert_eq!(kubelet["config"]["maxPods"], 58);
    assert_eq!(kubelet["config"]["imageGCHighThresholdPercent"], 70);
    assert_eq!(kubelet["config"]["imageGCLowThresholdPercent"], 50);
    assert_eq!(
        kubelet["config"]["evictionHard"],
        json!({"memory.available": "200Mi", "nodefs.available": "10%"})
    );
    assert_eq!(
        kubelet["flags"],
        json!([
            "--node-labels=env=staging,unmanaged-node=true",
            "--register-with-taints=staging-only=true:PreferNoSchedule,dedicated:NoSchedule",
        ])
    );
}

#[test]
fn nodeconfig_without_kubelet_settings_has_no_kubelet_section() {
    let config = nodeconfig(&render_ok(&bare(Bootstrap::Al2023)));
    assert_eq!(config["spec"]["cluster"]["cidr"], "10.100.0.0/16");
    assert!(config["spec"].get("kubelet").is_none());
}

#[test]
fn max_pods_may_come_from_kubelet_config() {
    let mut input = bare(Bootstrap::Al2023);
    input.kubelet_config = vec![("maxPods".into(), json!(17))];
    let config = nodeconfig(&render_ok(&input));
    assert_eq!(config["spec"]["kubelet"]["config"]["maxPods"], 17);
    input.bootstrap = Bootstrap::Al2;
    let script = &shell_parts(&render_ok(&input))[0];
    assert!(script.contains("--use-max-pods false"));
    assert!(script.contains("'--max-pods=17'"));
}

#[test]
fn python_email_reads_the_documents() {
    let program = r##"
import email, sys
message = email.message_from_string(sys.stdin.read())
assert message.is_multipart(), "not multipart"
assert message.get_content_type() == "multipart/mixed"
print(",".join(part.get_content_type() for part in message.get_payload()))
for part in message.get_payload():
    assert part.get_payload().startswith(("---", "#!/bin/bash")), part.get_payload()[:40]
"##;
    let mut nodeconfig_only = managed(Bootstrap::Al2023, Mode::ManagedEksAmi);
    nodeconfig_only.pre_bootstrap_commands = vec![];
    nodeconfig_only.efs_mounts = vec![];
    nodeconfig_only.block_pod_imds = false;
    for (input, expected) in [
        (
            sample(Bootstrap::Al2023),
            "application/node.eks.aws,text/x-shellscript",
        ),
        (sample(Bootstrap::Al2), "text/x-shellscript"),
        (
            managed(Bootstrap::Al2023, Mode::ManagedEksAmi),
            "application/node.eks.aws,text/x-shellscript",
        ),
        (nodeconfig_only, "application/node.eks.aws"),
        (
            managed(Bootstrap::Al2023, Mode::ManagedCustomAmi),
            "application/node.eks.aws,text/x-shellscript",
        ),
        (
            managed(Bootstrap::Al2, Mode::ManagedEksAmi),
            "text/x-shellscript",
        ),
        (
            managed(Bootstrap::Al2, Mode::ManagedCustomAmi),
            "text/x-shellscript",
        ),
    ] {
        let doc = render_ok(&input);
        let mut python = Command::new("python3");
        python.arg("-c").arg(program);
        let Some(out) = common::run_installed(&mut python, resolved(&doc).as_bytes()) else {
            return;
        };
        assert!(
            out.status.success(),
            "python3 rejected the document: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), expected);
    }
}

/// Text beyond ASCII in every field of an AL2023 or AL2 group that reaches
/// a MIME part.
fn non_ascii(bootstrap: Bootstrap) -> UserDataInput {
    let mut input = sample(bootstrap);
    input.pre_bootstrap_commands = vec![TEXT_BEYOND_ASCII_COMMAND.into()];
    input.user_data_parts = vec![ExtraPart {
        content_type: "text/cloud-config".into(),
        content:
            "#cloud-config\nwrite_files:\n  - path: /etc/banner\n    content: \"Grüße ✓ 漢字\"\n"
                .into(),
    }];
    if bootstrap == Bootstrap::Al2023 {
        input.node_config = Some(json!({"containerd": {"config": "# Größe ✓ 漢字 😀\n"}}));
    }
    input
}

const TEXT_BEYOND_ASCII_COMMAND: &str = "echo \"Grüße ✓ 漢字 😀\" > /etc/motd";

#[test]
fn a_part_with_non_ascii_text_is_declared_base64_and_an_ascii_part_is_not() {
    for bootstrap in [Bootstrap::Al2023, Bootstrap::Al2] {
        let ascii = render_ok(&sample(bootstrap));
        assert!(!ascii.contains(ENCODED), "{bootstrap:?}");
        assert!(
            !ascii.contains("Content-Transfer-Encoding"),
            "{bootstrap:?}"
        );
        assert_eq!(pieces(&ascii), [Piece::Text(&ascii)]);

        let doc = render_ok(&non_ascii(bootstrap));
        let (_, parts) = parse_mime(&doc);
        for part in &parts {
            let base64 = part
                .headers
                .contains(&("Content-Transfer-Encoding".into(), "base64".into()));
            assert_eq!(base64, !part.body.is_ascii(), "{bootstrap:?}: {part:?}");
            assert!(base64, "{bootstrap:?}: every part carries non-ASCII text");
            // The body is what CloudFormation encodes, marked at both ends.
            assert!(part.body.starts_with(ENCODED) && part.body.ends_with(ENCODED));
        }
        let encoded: Vec<&str> = pieces(&doc)
            .into_iter()
            .filter_map(|piece| match piece {
                Piece::Base64(text) => Some(text),
                Piece::Text(_) => None,
            })
            .collect();
        assert_eq!(encoded.len(), parts.len(), "{bootstrap:?}");
        assert!(
            encoded
                .iter()
                .any(|body| body.contains(TEXT_BEYOND_ASCII_COMMAND))
        );
    }
}

/// Python's `email`, which cloud-init parses user data with, hands each
/// part back byte for byte once CloudFormation has encoded the marked
/// bodies (`Fn::Base64` encodes UTF-8). A part without a transfer encoding
/// would come back with its non-ASCII text escaped.
#[test]
fn non_ascii_text_comes_back_from_python_email_byte_for_byte() {
    let program = r##"
import base64, email, re, sys
text = sys.stdin.buffer.read().decode("utf-8")
text = re.sub("\x02(.*?)\x02", lambda m: base64.b64encode(m.group(1).encode()).decode(), text, flags=re.S)
for part in email.message_from_string(text).walk():
    if not part.is_multipart():
        sys.stdout.buffer.write(part.get_payload(decode=True) + b"\0")
"##;
    for bootstrap in [Bootstrap::Al2023, Bootstrap::Al2] {
        let doc = resolved(&render_ok(&non_ascii(bootstrap)));
        let mut python = Command::new("python3");
        python.arg("-c").arg(program);
        let Some(out) = common::run_installed(&mut python, doc.as_bytes()) else {
            return;
        };
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let payloads: Vec<&[u8]> = out
            .stdout
            .split(|b| *b == 0)
            .filter(|p| !p.is_empty())
            .collect();
        let expected: Vec<String> = parse_mime(&doc)
            .1
            .into_iter()
            .map(|part| {
                format!(
                    "{}\n",
                    part.body.trim_matches(ENCODED).trim_end_matches('\n')
                )
            })
            .collect();
        assert_eq!(payloads.len(), expected.len(), "{bootstrap:?}");
        for (payload, expected) in payloads.iter().zip(&expected) {
            assert_eq!(String::from_utf8_lossy(payload), *expected, "{bootstrap:?}");
        }
        let all = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(all.contains(TEXT_BEYOND_ASCII_COMMAND), "{bootstrap:?}");
        assert!(all.contains("\"Grüße ✓ 漢字\""), "{bootstrap:?}");
    }
}

#[test]
fn toml_text_beyond_ascii_is_escaped_and_reads_back() {
    let quoted = toml_quote("Grüße ✓ 漢字 😀");
    assert_eq!(
        quoted,
        r#""Gr\u00FC\u00DFe \u2713 \u6F22\u5B57 \U0001F600""#
    );
    let table: toml::Table = format!("motd = {quoted}").parse().expect("TOML");
    assert_eq!(table["motd"].as_str(), Some("Grüße ✓ 漢字 😀"));
}

// ------------------------------------------------------------------- shell

#[test]
fn every_script_passes_bash_syntax_check() {
    if !have("bash") {
        eprintln!("bash not found; skipping");
        return;
    }
    for bootstrap in [Bootstrap::Al2023, Bootstrap::Al2] {
        let mut al2_arguments = managed(bootstrap, Mode::ManagedCustomAmi);
        if bootstrap == Bootstrap::Al2 {
            al2_arguments.bootstrap_arguments = Some("--enable-docker-bridge true".into());
        }
        for (kind, input) in [
            ("full", sample(bootstrap)),
            ("bare", bare(bootstrap)),
            ("managed-eks-ami", managed(bootstrap, Mode::ManagedEksAmi)),
            ("managed-custom-ami", al2_arguments),
        ] {
            let name = format!("{bootstrap:?}-{kind}");
            let doc = render_ok(&input);
            for (i, script) in shell_parts(&doc).iter().enumerate() {
                bash_syntax_ok(&format!("{name}-part{i}.sh"), script);
                if input.signal.is_some() {
                    let signaller = heredoc(script, "EKSYNTH_SIGNAL_EOF");
                    bash_syntax_ok(&format!("{name}-signal.sh"), &signaller);
                } else {
                    assert!(!script.contains("EKSYNTH_SIGNAL_EOF"), "{name}");
                }
                if input.block_pod_imds {
                    let imds = heredoc(script, "EKSYNTH_IMDS_EOF");
                    bash_syntax_ok(&format!("{name}-imds.sh"), &imds);
                }
            }
        }
    }
    let signaller = render_signaller(&sample_signal()).expect("renders");
    bash_syntax_ok("signaller.sh", &signaller);
    let signaller = render_signaller(&sigv4_signal()).expect("renders");
    bash_syntax_ok("sigv4-signaller.sh", &signaller);
    // With post-bootstrap commands, which run between the wait for the
    // node's registration and SUCCESS.
    for (name, signal) in [("image", sample_signal()), ("sigv4", sigv4_signal())] {
        let signal = Signal {
            post_bootstrap_commands: vec!["echo 'it''s \"done\"'".into(), "exit 0".into()],
            ..signal
        };
        let signaller = render_signaller(&signal).expect("renders");
        bash_syntax_ok(&format!("{name}-post-bootstrap-signaller.sh"), &signaller);
        let run = signaller
            .find("post_bootstrap 'exit 0' 2")
            .expect("the commands run");
        let success = match name {
            "image" => "signal 0 \"node $node is registered\"",
            _ => "send_signal SUCCESS",
        };
        assert!(run < signaller.rfind(success).expect("SUCCESS"), "{name}");
        assert!(run > signaller.find("healthz").expect("the wait"), "{name}");
        let wait = signaller
            .rfind("registered; then")
            .or_else(|| signaller.rfind("until registered"))
            .expect("the wait for the registration");
        assert!(run > wait, "{name}");
    }
}

#[test]
fn awkward_values_round_trip_through_bash() {
    if !have("bash") {
        eprintln!("bash not found; skipping");
        return;
    }
    let awkward = r#"it's "quoted" $HOME ${PATH} `id` \back\\slash"#;
    let mut input = sample(Bootstrap::Al2);
    input.labels = vec![label("team", awkward)];
    input.taints = vec![taint("only", Some(awkward), "NoSchedule")];
    input.kubelet_config = vec![
        ("imageGCHighThresholdPercent".into(), json!(85)),
        ("containerLogMaxSize".into(), json!(awkward)),
    ];
    input.pre_bootstrap_commands = vec![
        awkward.to_string(),
        "echo 'single' \"double\" $((1 + 2)) \\".into(),
        "printf '%s\\n' line1\nline2".into(),
    ];
    input.efs_mounts[0].mount_point = "/mnt/it's here".into();
    let script = &shell_parts(&render_ok(&input))[0];

    // bootstrap.sh's arguments, as bash passes them.
    let start = script
        .find("/etc/eks/bootstrap.sh '")
        .expect("bootstrap call");
    let call_lines: Vec<&str> = script[start..].lines().collect();
    let end = call_lines
        .iter()
        .position(|l| !l.ends_with('\\'))
        .expect("end of the call");
    let call = call_lines[..=end]
        .join("\n")
        .replacen("/etc/eks/bootstrap.sh", "printf '%s\\0'", 1);
    let args = bash_words(&call);
    let extra_at = args
        .iter()
        .position(|a| a == "--kubelet-extra-args")
        .expect("extra args");
    assert_eq!(
        args[extra_at + 1],
        format!(
            "--node-labels=team={awkward} --register-with-taints=only={awkward}:NoSchedule \
             --max-pods=58 --image-gc-high-threshold=85"
        )
    );
    assert_eq!(args[0], CLUSTER, "placeholders pass through verbatim");

    // Pre-bootstrap commands reach `bash -c` exactly as written.
    let start = script.find("\nrun_command '").expect("commands") + 1;
    let end = start + script[start..].find("\n\n").expect("end of commands");
    let block = format!(
        "run_command() {{ printf '%s\\0' \"$1\"; }}\n{}",
        &script[start..end]
    );
    assert_eq!(bash_words(&block), input.pre_bootstrap_commands);

    // EFS mount point and fstab line.
    let line = script
        .lines()
        .find(|l| l.starts_with("efs_mount '"))
        .expect("efs_mount call");
    let words = bash_words(&format!("efs_mount() {{ printf '%s\\0' \"$@\"; }}\n{line}"));
    assert_eq!(words[0], "/mnt/it's here");
    assert!(
        words[1].starts_with(&format!(
            "fs-0123456789abcdef0.efs.{REGION}.{URL_SUFFIX}:/ /mnt/it's\\040here nfs4 "
        )),
        "{}",
        words[1]
    );
    assert!(words[1].contains("nfsvers=4.1,") && words[1].contains(",_netdev,nofail 0 0"));

    // The kubelet drop-in's merge gets the remaining kubelet settings as
    // JSON, verbatim in a quoted heredoc.
    let json_text = kubelet_config_json(script);
    let merged: Value = serde_json::from_str(json_text).expect("valid JSON");
    assert_eq!(merged, json!({"containerLogMaxSize": awkward}));
}

#[test]
fn awkward_values_round_trip_through_nodeconfig_yaml() {
    let awkward = "it's \"quoted\" $HOME ${PATH} \\back\\\\slash\ttab #hash";
    let mut input = bare(Bootstrap::Al2023);
    input.labels = vec![label("team", awkward)];
    input.taints = vec![taint("only", Some(awkward), "NoExecute")];
    input.kubelet_config = vec![
        ("containerLogMaxSize".into(), json!(awkward)),
        ("kubeReserved".into(), json!({ awkward: awkward })),
    ];
    let config = nodeconfig(&render_ok(&input));
    let kubelet = &config["spec"]["kubelet"];
    assert_eq!(
        kubelet["flags"],
        json!([
            format!("--node-labels=team={awkward}"),
            format!("--register-with-taints=only={awkward}:NoExecute"),
        ])
    );
    assert_eq!(kubelet["config"]["containerLogMaxSize"], awkward);
    assert_eq!(kubelet["config"]["kubeReserved"][awkward], awkward);
}

// --------------------------------------------------------------- signaller

#[test]
fn embedded_signaller_signs_its_own_request_for_the_exact_resource() {
    let signaller = render_signaller(&sigv4_signal()).expect("renders");
    assert!(signaller.contains(&format!("LOGICAL_ID='{LOGICAL_ID}'\n")));
    assert!(signaller.contains(&format!("STACK_NAME='{STACK}'\n")));
    // Five minutes before CloudFormation's 15.
    assert!(signaller.contains("DEADLINE_SECONDS='600'\n"));
    for needle in [
        "--aws-sigv4 \"aws:amz:${REGION}:cloudformation\"",
        "x-amz-security-token: ${session}",
        "X-aws-ec2-metadata-token-ttl-seconds",
        "meta-data/iam/security-credentials/",
        "Action=SignalResource",
        "Version=2010-05-15",
        "--data-urlencode \"UniqueId=${instance_id}\"",
        "https://cloudformation.${REGION}.${URL_SUFFIX}/",
        "http://127.0.0.1:10248/healthz",
    ] {
        assert!(signaller.contains(needle), "missing {needle}");
    }
    for bootstrap in [Bootstrap::Al2023, Bootstrap::Al2] {
        let mut input = sample(bootstrap);
        input.signal = Some(sigv4_signal());
        let doc = render_ok(&input);
        assert!(!doc.contains("cfn-signal"));
        assert!(!doc.contains("/opt/aws/bin"));
        let script = &shell_parts(&doc)[0];
        assert_eq!(heredoc(script, "EKSYNTH_SIGNAL_EOF"), signaller);
    }
}

#[test]
fn image_signaller_uses_cfn_signal_and_embeds_no_signer() {
    let signaller = render_signaller(&sample_signal()).expect("renders");
    assert!(signaller.contains("PATH=$PATH:/opt/aws/bin\n"));
    assert!(signaller.contains(&format!(
        "cfn-signal --stack '{STACK}' --resource '{LOGICAL_ID}' \\\n      --region '{REGION}' -e \"$1\" --reason \"$2\""
    )));
    for bootstrap in [Bootstrap::Al2023, Bootstrap::Al2] {
        let doc = render_ok(&sample(bootstrap));
        for needle in ["--aws-sigv4", "security-credentials", "SignalResource"] {
            assert!(!doc.contains(needle), "{needle}");
        }
        let script = &shell_parts(&doc)[0];
        assert_eq!(heredoc(script, "EKSYNTH_SIGNAL_EOF"), signaller);
    }
}

#[test]
fn signaller_values_round_trip_through_bash() {
    if !have("bash") {
        eprintln!("bash not found; skipping");
        return;
    }
    let signal = Signal {
        stack_name: "a'b \"c\" $d \\e".into(),
        logical_id: "Group1AutoScalingGroup".into(),
        region: REGION.into(),
        url_suffix: URL_SUFFIX.into(),
        timeout_seconds: 42,
        client: SignalClient::Embedded,
        kubelet_unit: "kubelet.service".into(),
        post_bootstrap_commands: vec![],
    };
    let script = render_signaller(&signal).expect("renders");
    let assignments: Vec<&str> = script
        .lines()
        .filter(|l| {
            [
                "STACK_NAME=",
                "LOGICAL_ID=",
                "REGION=",
                "URL_SUFFIX=",
                "DEADLINE_SECONDS=",
            ]
            .iter()
            .any(|p| l.starts_with(p))
        })
        .collect();
    let words = bash_words(&format!(
        "{}\nprintf '%s\\0' \"$STACK_NAME\" \"$LOGICAL_ID\" \"$REGION\" \"$URL_SUFFIX\" \"$DEADLINE_SECONDS\"",
        assignments.join("\n")
    ));
    assert_eq!(
        words,
        [
            signal.stack_name.as_str(),
            "Group1AutoScalingGroup",
            REGION,
            URL_SUFFIX,
            "21"
        ]
    );
}

#[test]
fn signaller_never_blocks_the_boot() {
    for bootstrap in [Bootstrap::Al2023, Bootstrap::Al2] {
        let doc = render_ok(&sample(bootstrap));
        let script = &shell_parts(&doc)[0];
        let unit = heredoc(
            &script[script.find("eksynth-signal.service <<").expect("unit")..],
            "EKSYNTH_UNIT_EOF",
        );
        assert!(unit.contains("After=network-online.target kubelet.service\n"));
        assert!(!unit.contains("Before="));
        assert!(!unit.lines().any(|l| l == "[Install]"));
        // A simple service (the default type): started, not waited for.
        assert!(!unit.contains("Type="));
        assert!(unit.contains("/usr/bin/timeout 900 /usr/local/bin/eksynth-signal"));
        assert!(script.contains("systemctl start --no-block eksynth-signal.service\n"));
        assert_eq!(script.matches("eksynth-signal.service").count(), 2);
        // The ERR trap reports failures at once.
        assert!(script.contains("/usr/local/bin/eksynth-signal --failure"));
    }
    let doc = render_ok(&sample(Bootstrap::Al2023));
    let script = &shell_parts(&doc)[0];
    assert!(!script.contains("bootstrap.sh"));
    // On AL2023 nothing may wait for kubelet before the script ends.
    let tail = &script[script.find("systemctl start --no-block").expect("start")..];
    assert_eq!(
        tail.lines().count(),
        2,
        "the start is the last step:\n{tail}"
    );
}

#[test]
fn al2_starts_the_signaller_after_bootstrap() {
    let doc = render_ok(&sample(Bootstrap::Al2));
    let script = &shell_parts(&doc)[0];
    let bootstrap = script.find("/etc/eks/bootstrap.sh '").expect("bootstrap");
    let start = script.find("systemctl start --no-block").expect("start");
    let install = script
        .find("cat > /usr/local/bin/eksynth-signal")
        .expect("install");
    let trap = script.find("trap 'on_error").expect("trap");
    assert!(trap < install && install < bootstrap && bootstrap < start);
    assert!(script.contains("  --use-max-pods false \\\n"));
    assert!(script.contains("  --dns-cluster-ip '10.100.0.10'\n"));
}

#[test]
fn imds_block_is_persistent_without_iptables_services() {
    for bootstrap in [Bootstrap::Al2023, Bootstrap::Al2] {
        let doc = render_ok(&sample(bootstrap));
        let script = &shell_parts(&doc)[0];
        assert!(!script.contains("install -y iptables-services"));
        assert!(!script.contains("enable --now iptables"));
        let block = heredoc(script, "EKSYNTH_IMDS_EOF");
        assert!(block.contains("iptables -w -I FORWARD 1 -i 'eni+' -d 169.254.169.254/32 -j DROP"));
        assert!(block.contains("iifname \"eni*\" ip daddr 169.254.169.254 drop"));
        assert!(script.contains("systemctl enable eksynth-imds-block.service\n"));
        let bare_doc = render_ok(&bare(bootstrap));
        assert!(!bare_doc.contains("169.254.169.254/32"));
        assert!(!bare_doc.contains("efs_mount"));
        assert!(!bare_doc.contains("run_command"));
    }
}

// ------------------------------------------------------------------ errors

#[test]
fn unrepresentable_inputs_are_refused() {
    let mut input = bare(Bootstrap::Al2023);
    input.labels = vec![label("env", "a,b=c")];
    assert!(matches!(
        render(&input),
        Err(UserDataError::Separator { separator: ',', .. })
    ));

    let mut input = bare(Bootstrap::Al2);
    input.taints = vec![taint("k", Some("v"), "Sometimes")];
    assert!(matches!(
        render(&input),
        Err(UserDataError::TaintEffect { .. })
    ));

    let mut input = bare(Bootstrap::Al2);
    input.max_pods = Some(10);
    input.kubelet_config = vec![("maxPods".into(), json!(20))];
    assert!(matches!(
        render(&input),
        Err(UserDataError::DuplicateKubeletSetting(_))
    ));

    let mut input = bare(Bootstrap::Al2023);
    input.kubelet_config = vec![("a".into(), json!(1)), ("a".into(), json!(2))];
    assert!(matches!(
        render(&input),
        Err(UserDataError::DuplicateKubeletSetting(_))
    ));

    let mut input = bare(Bootstrap::Al2023);
    input.efs_mounts = sample(Bootstrap::Al2023).efs_mounts;
    input.efs_mounts[0].mount_point = "mnt/efs".into();
    assert!(matches!(render(&input), Err(UserDataError::MountPoint(_))));
}

// ---------------------------------------------------------------- quoting

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn shell_quote_round_trips(text in "[^\u{0}]{0,40}") {
        if have("bash") {
            let words = bash_words(&format!("printf '%s\\0' {}", shell_quote(&text)));
            prop_assert_eq!(words, vec![text]);
        }
    }

    #[test]
    fn double_quote_reads_back_as_json(text in "[^\u{1}]{0,40}") {
        let back: String = serde_json::from_str(&double_quote(&text)).expect("valid JSON");
        prop_assert_eq!(back, text);
    }
}

// ---------------------------------------------------------- managed groups

/// Text that only the full bootstrap or the signal would write.
const NOT_IN_MANAGED_EKS_AMI: &[&str] = &[
    "eksynth-signal",
    "SignalResource",
    "cfn-signal",
    "should-signal",
    "bootstrap.sh",
    "Start-EKSBootstrap",
    LOGICAL_ID,
    STACK,
    CLUSTER,
    ENDPOINT,
    CA,
];

#[test]
fn managed_eks_ami_user_data_has_only_the_users_parts() {
    for bootstrap in [
        Bootstrap::Al2023,
        Bootstrap::Al2,
        Bootstrap::Bottlerocket,
        Bootstrap::Windows,
    ] {
        let input = match bootstrap {
            Bootstrap::Bottlerocket => bottlerocket(Mode::ManagedEksAmi),
            Bootstrap::Windows => windows(Mode::ManagedEksAmi),
            _ => managed(bootstrap, Mode::ManagedEksAmi),
        };
        let doc = render_ok(&input);
        assert!(!doc.is_empty(), "{bootstrap:?}");
        for needle in NOT_IN_MANAGED_EKS_AMI {
            assert!(
                !doc.contains(needle),
                "{bootstrap:?} managed user data contains {needle:?}:\n{doc}"
            );
        }
    }

    // AL2023: a NodeConfig with the kubelet section only, and a script with
    // the user's steps.
    let doc = render_ok(&managed(Bootstrap::Al2023, Mode::ManagedEksAmi));
    let config = nodeconfig(&doc);
    assert!(config["spec"].get("cluster").is_none());
    assert_eq!(
        config["spec"]["kubelet"]["config"],
        json!({
            "maxPods": 58,
            "imageGCHighThresholdPercent": 70,
            "imageGCLowThresholdPercent": 50,
            "evictionHard": {"memory.available": "200Mi", "nodefs.available": "10%"},
        })
    );
    assert!(config["spec"]["kubelet"].get("flags").is_none());
    let scripts = shell_parts(&doc);
    assert_eq!(scripts.len(), 1);
    for needle in [
        "run_command 'yum install -y amazon-ssm-agent'",
        "/usr/local/sbin/eksynth-imds-block",
        "efs_mount '/mnt/efs'",
    ] {
        assert!(scripts[0].contains(needle), "missing {needle}");
    }

    // AL2: every kubelet setting goes into kubelet-config.json, the image
    // GC thresholds too, merged by a kubelet drop-in after EKS's bootstrap.
    let doc = render_ok(&managed(Bootstrap::Al2, Mode::ManagedEksAmi));
    let script = &shell_parts(&doc)[0];
    let line = kubelet_config_json(script);
    for key in [
        "imageGCHighThresholdPercent",
        "imageGCLowThresholdPercent",
        "evictionHard",
    ] {
        assert!(line.contains(key), "{key} missing from {line}");
    }
}

#[test]
fn managed_groups_ignore_labels_and_taints_on_eks_amis() {
    // The caller passes none; if some arrive anyway, EKS sets them instead.
    let mut input = managed(Bootstrap::Al2023, Mode::ManagedEksAmi);
    input.labels = vec![label("env", "staging")];
    input.taints = vec![taint("dedicated", None, "NoSchedule")];
    let doc = render_ok(&input);
    assert!(!doc.contains("--node-labels") && !doc.contains("--register-with-taints"));
}

#[test]
fn empty_managed_input_renders_nothing() {
    for bootstrap in [
        Bootstrap::Al2023,
        Bootstrap::Al2,
        Bootstrap::Bottlerocket,
        Bootstrap::Windows,
    ] {
        let mut input = bare(bootstrap);
        input.mode = Mode::ManagedEksAmi;
        input.signal = None;
        assert_eq!(render_ok(&input), "", "{bootstrap:?}");
    }
}

#[test]
fn managed_custom_ami_bootstraps_fully_without_signalling() {
    let doc = render_ok(&managed(Bootstrap::Al2023, Mode::ManagedCustomAmi));
    let config = nodeconfig(&doc);
    assert_eq!(config["spec"]["cluster"]["name"], "staging");
    assert_eq!(config["spec"]["kubelet"]["config"]["maxPods"], 58);
    let script = &shell_parts(&doc)[0];
    assert!(!script.contains("eksynth-signal"));
    assert!(script.contains("run_command 'yum install -y amazon-ssm-agent'"));

    // Nothing for the script to do: the NodeConfig alone.
    let mut input = bare(Bootstrap::Al2023);
    input.mode = Mode::ManagedCustomAmi;
    input.signal = None;
    let (_, parts) = parse_mime(&render_ok(&input));
    assert_eq!(parts.len(), 1);
    assert_eq!(parts[0].content_type(), "application/node.eks.aws");

    let doc = render_ok(&managed(Bootstrap::Al2, Mode::ManagedCustomAmi));
    let script = &shell_parts(&doc)[0];
    assert!(script.contains("/etc/eks/bootstrap.sh '"));
    assert!(
        script.contains("'--max-pods=58 --image-gc-high-threshold=70 --image-gc-low-threshold=50'")
    );
    assert!(!script.contains("eksynth-signal"));
    assert!(!script.contains("--node-labels"));
}

#[test]
fn al2_bootstrap_arguments_come_last_and_verbatim() {
    if !have("bash") {
        eprintln!("bash not found; skipping");
        return;
    }
    let extra = "--enable-docker-bridge true --aws-api-retry-attempts 5 --pause-container-account \"$(echo 602401143452)\"";
    for mode in [Mode::SelfManaged, Mode::ManagedCustomAmi] {
        let mut input = if mode == Mode::SelfManaged {
            sample(Bootstrap::Al2)
        } else {
            managed(Bootstrap::Al2, mode)
        };
        input.bootstrap_arguments = Some(extra.into());
        let script = &shell_parts(&render_ok(&input))[0];
        assert!(script.contains(&format!("\n  {extra}\n")), "{mode:?}");
        let start = script
            .find("/etc/eks/bootstrap.sh '")
            .expect("bootstrap call");
        let call_lines: Vec<&str> = script[start..].lines().collect();
        let end = call_lines
            .iter()
            .position(|l| !l.ends_with('\\'))
            .expect("end of the call");
        let call =
            call_lines[..=end]
                .join("\n")
                .replacen("/etc/eks/bootstrap.sh", "printf '%s\\0'", 1);
        let args = bash_words(&call);
        // The user's text is shell: its command substitution ran.
        assert_eq!(
            args[args.len() - 8..],
            [
                "--dns-cluster-ip",
                "10.100.0.10",
                "--enable-docker-bridge",
                "true",
                "--aws-api-retry-attempts",
                "5",
                "--pause-container-account",
                "602401143452",
            ],
            "{mode:?}"
        );
    }
}

// ------------------------------------------------------------ Bottlerocket

/// The Bottlerocket settings, parsed as TOML once placeholders are resolved.
fn bottlerocket_settings(doc: &str) -> toml::Table {
    match resolved(doc).parse::<toml::Table>() {
        Ok(table) => table,
        Err(e) => panic!("not TOML: {e}\n{doc}"),
    }
}

fn settings<'a>(table: &'a toml::Table, path: &[&str]) -> &'a toml::Value {
    let mut value = table.get("settings").expect("[settings]");
    for key in path {
        value = value
            .get(key)
            .unwrap_or_else(|| panic!("no settings.{}", path.join(".")));
    }
    value
}

#[test]
fn bottlerocket_settings_are_toml_with_the_expected_values() {
    let doc = render_ok(&bottlerocket(Mode::SelfManaged));
    assert!(!doc.starts_with("MIME-Version"));
    let table = bottlerocket_settings(&doc);
    let k8s = |path: &[&str]| {
        let mut full = vec!["kubernetes"];
        full.extend_from_slice(path);
        settings(&table, &full).clone()
    };
    assert_eq!(k8s(&["cluster-name"]).as_str(), Some("staging"));
    assert_eq!(
        k8s(&["api-server"]).as_str(),
        Some("https://0123456789ABCDEF.gr7.eu-west-1.eks.amazonaws.com")
    );
    assert_eq!(
        k8s(&["cluster-certificate"]).as_str(),
        Some("LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==")
    );
    assert_eq!(k8s(&["cluster-dns-ip"]).as_str(), Some("10.100.0.10"));
    assert_eq!(k8s(&["max-pods"]).as_integer(), Some(58));
    assert_eq!(
        k8s(&["image-gc-high-threshold-percent"]).as_integer(),
        Some(70)
    );
    assert_eq!(
        k8s(&["image-gc-low-threshold-percent"]).as_integer(),
        Some(50)
    );
    assert_eq!(k8s(&["pod-pids-limit"]).as_integer(), Some(4096));
    assert_eq!(k8s(&["container-log-max-size"]).as_str(), Some("50Mi"));
    assert_eq!(
        k8s(&["eviction-hard", "memory.available"]).as_str(),
        Some("200Mi")
    );
    assert_eq!(
        k8s(&["eviction-hard", "nodefs.available"]).as_str(),
        Some("10%")
    );
    assert_eq!(k8s(&["kube-reserved", "cpu"]).as_str(), Some("250m"));
    assert_eq!(k8s(&["node-labels", "env"]).as_str(), Some("staging"));
    assert_eq!(
        k8s(&["node-labels", "unmanaged-node"]).as_str(),
        Some("true")
    );
    // One taint on a key: a `value:Effect` string; several: a list.
    assert_eq!(
        k8s(&["node-taints", "dedicated"]).as_str(),
        Some(":NoSchedule")
    );
    assert_eq!(
        k8s(&["node-taints", "staging-only"]),
        toml::Value::Array(vec!["true:PreferNoSchedule".into(), ":NoExecute".into()])
    );

    let cfn = settings(&table, &["cloudformation"]);
    assert_eq!(cfn["should-signal"].as_bool(), Some(true));
    assert_eq!(cfn["stack-name"].as_str(), Some("staging-nodes"));
    assert_eq!(cfn["logical-resource-id"].as_str(), Some(LOGICAL_ID));
}

#[test]
fn bottlerocket_managed_settings() {
    // On the EKS AMI: only the user's settings; EKS adds the cluster's.
    let table = bottlerocket_settings(&render_ok(&bottlerocket(Mode::ManagedEksAmi)));
    let k8s = settings(&table, &["kubernetes"]).as_table().expect("table");
    let mut keys: Vec<&str> = k8s.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "container-log-max-size",
            "eviction-hard",
            "image-gc-high-threshold-percent",
            "image-gc-low-threshold-percent",
            "kube-reserved",
            "max-pods",
            "pod-pids-limit",
        ]
    );
    assert!(table["settings"].get("cloudformation").is_none());

    // On a custom AMI: the cluster settings too, but no signal.
    let table = bottlerocket_settings(&render_ok(&bottlerocket(Mode::ManagedCustomAmi)));
    assert_eq!(
        settings(&table, &["kubernetes", "cluster-name"]).as_str(),
        Some("staging")
    );
    assert!(table["settings"].get("cloudformation").is_none());
}

#[test]
fn awkward_values_round_trip_through_bottlerocket_toml() {
    let awkward = "it's \"quoted\" $HOME ${PATH} \\back\\\\slash\ttab #hash ]] [x] é";
    let mut input = bottlerocket(Mode::SelfManaged);
    input.labels = vec![label("example.com/team", awkward)];
    input.taints = vec![taint("only", Some(awkward), "NoExecute")];
    input.kubelet_config = vec![("kubeReserved".into(), json!({ awkward: awkward }))];
    input.signal.as_mut().expect("signal").logical_id = awkward.into();
    let table = bottlerocket_settings(&render_ok(&input));
    assert_eq!(
        settings(&table, &["kubernetes", "node-labels", "example.com/team"]).as_str(),
        Some(awkward)
    );
    assert_eq!(
        settings(&table, &["kubernetes", "node-taints", "only"]).as_str(),
        Some(format!("{awkward}:NoExecute").as_str())
    );
    assert_eq!(
        settings(&table, &["kubernetes", "kube-reserved", awkward]).as_str(),
        Some(awkward)
    );
    assert_eq!(
        settings(&table, &["cloudformation", "logical-resource-id"]).as_str(),
        Some(awkward)
    );
}

// ----------------------------------------------------------------- Windows

#[test]
fn powershell_quote_doubles_single_quotes() {
    assert_eq!(powershell_quote("it's"), "'it''s'");
    assert_eq!(powershell_quote(""), "''");
    assert_eq!(powershell_quote("$env:X \"y\" `z"), "'$env:X \"y\" `z'");
    // PowerShell also ends single-quoted strings at typographic quotes.
    assert_eq!(powershell_quote("it\u{2019}s"), "'it\u{2019}\u{2019}s'");
    assert_eq!(powershell_quote(CLUSTER), format!("'{CLUSTER}'"));
}

#[test]
fn windows_script_bootstraps_waits_for_kubelet_and_registration_and_signals() {
    let doc = render_ok(&windows(Mode::SelfManaged));
    assert!(doc.starts_with("<powershell>\n"));
    assert!(doc.ends_with("</powershell>\n"));
    assert_eq!(doc.matches("</powershell>").count(), 1);
    for needle in [
        "[string]$EKSBootstrapScriptFile = \"$env:ProgramFiles\\Amazon\\EKS\\Start-EKSBootstrap.ps1\"",
        &format!(
            "& $EKSBootstrapScriptFile -EKSClusterName '{CLUSTER}' -APIServerEndpoint '{ENDPOINT}' \
             -Base64ClusterCA '{CA}' -ServiceCIDR '10.100.0.0/16' -DNSClusterIP '10.100.0.10' \
             -KubeletExtraArgs \
             '--node-labels=env=staging,unmanaged-node=true \
             --register-with-taints=staging-only=true:PreferNoSchedule,dedicated:NoSchedule \
             --max-pods=58 --image-gc-high-threshold=70 --image-gc-low-threshold=50 \
             --eviction-hard=memory.available<200Mi,nodefs.available<10%'"
        ),
        "Invoke-WebRequest -Uri 'http://127.0.0.1:10248/healthz' -UseBasicParsing",
        "$deadline = (Get-Date).AddSeconds(600)",
        // The registration check reads kubelet's flags from its service.
        "(Get-CimInstance Win32_Service -Filter \"Name='kubelet'\").PathName",
        "[EksynthNode]::Why($kubelet, [System.Net.Dns]::GetHostName(), \"$env:ProgramData\\kubernetes\\kubeconfig\")",
        &format!(
            "& \"$env:ProgramFiles\\Amazon\\cfn-bootstrap\\cfn-signal.exe\" --exit-code $ExitCode \
             --stack '{STACK}' --resource '{LOGICAL_ID}' --region '{REGION}'"
        ),
        "  Send-EksynthSignal 0\n",
        "  Send-EksynthSignal 1\n",
        "Invoke-EksynthCommand 'New-Item -ItemType Directory -Force -Path ''C:\\eksynth'' | Out-Null'",
    ] {
        assert!(doc.contains(needle), "missing {needle}\n{doc}");
    }
    // Commands first, then the bootstrap, the waits for kubelet and for the
    // node's registration (tests/signal_windows.rs runs that check), and the
    // signal.
    let order = [
        "Invoke-EksynthCommand 'New-Item",
        "& $EKSBootstrapScriptFile",
        "while (-not (Test-EksynthKubeletHealthy))",
        "  Add-Type -TypeDefinition $EksynthNodeSource\n",
        "while (-not (Test-EksynthRegistered))",
        "throw ('not registered after 600s: ' + $EksynthWhy)",
        "  Send-EksynthSignal 0",
        "\n} catch {\n",
        "  Send-EksynthSignal 1",
    ]
    .map(|n| doc.find(n).unwrap_or_else(|| panic!("missing {n}")));
    assert!(order.is_sorted(), "{order:?}");
}

#[test]
fn windows_quotes_awkward_values() {
    let mut input = windows(Mode::SelfManaged);
    input.labels = vec![label("team", "it's")];
    input.pre_bootstrap_commands = vec!["Write-Host 'it''s' \u{2018}x\u{2019}".into()];
    let doc = render_ok(&input);
    assert!(doc.contains("-KubeletExtraArgs '--node-labels=team=it''s "));
    assert!(doc.contains(
        "Invoke-EksynthCommand 'Write-Host ''it''''s'' \u{2018}\u{2018}x\u{2019}\u{2019}'"
    ));
}

#[test]
fn windows_managed_modes() {
    let doc = render_ok(&windows(Mode::ManagedCustomAmi));
    assert!(doc.contains("& $EKSBootstrapScriptFile -EKSClusterName"));
    assert!(doc.contains("Invoke-EksynthCommand"));
    assert!(!doc.contains("cfn-signal") && !doc.contains("healthz"));

    let doc = render_ok(&windows(Mode::ManagedEksAmi));
    assert!(doc.contains("Invoke-EksynthCommand 'New-Item"));
}

/// PowerShell, when it is installed: the scripts parse, and quoted values
/// read back exactly.
#[test]
fn windows_scripts_parse_in_powershell() {
    if !have("pwsh") {
        eprintln!("pwsh not found; skipping");
        return;
    }
    let parse = r#"
$text = [Console]::In.ReadToEnd()
$tokens = $null; $errors = $null
[void][System.Management.Automation.Language.Parser]::ParseInput($text, [ref]$tokens, [ref]$errors)
if ($errors.Count -gt 0) { $errors | ForEach-Object { [Console]::Error.WriteLine($_.ToString()) }; exit 1 }
"#;
    for mode in [
        Mode::SelfManaged,
        Mode::ManagedEksAmi,
        Mode::ManagedCustomAmi,
    ] {
        let doc = render_ok(&windows(mode));
        let script = doc
            .strip_prefix("<powershell>\n")
            .and_then(|d| d.strip_suffix("</powershell>\n"))
            .expect("tags");
        let mut pwsh = Command::new("pwsh");
        pwsh.args(["-NoProfile", "-NonInteractive", "-Command", parse]);
        let out = common::run_installed(&mut pwsh, resolved(script).as_bytes()).expect("pwsh runs");
        assert!(
            out.status.success(),
            "{mode:?} does not parse: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let awkward = "it's \u{2018}x\u{2019} \"q\" $env:PATH `n";
    let out = Command::new("pwsh")
        .args([
            "-NoProfile",
            "-NonInteractive",
            "-Command",
            &format!("[Console]::Out.Write({})", powershell_quote(awkward)),
        ])
        .output()
        .expect("pwsh runs");
    assert_eq!(String::from_utf8_lossy(&out.stdout), awkward);
}

// ----------------------------------------------------------- more errors

#[test]
fn inputs_a_family_or_mode_cannot_carry_are_refused() {
    let unsupported =
        |input: &UserDataInput| matches!(render(input), Err(UserDataError::Unsupported { .. }));

    let mut input = bottlerocket(Mode::SelfManaged);
    input.pre_bootstrap_commands = vec!["echo hi".into()];
    assert!(unsupported(&input));
    let mut input = bottlerocket(Mode::SelfManaged);
    input.block_pod_imds = true;
    assert!(unsupported(&input));
    // Bottlerocket has no serialize-image-pulls setting.
    let mut input = bottlerocket(Mode::SelfManaged);
    input.kubelet_config = vec![("serializeImagePulls".into(), json!(false))];
    assert!(unsupported(&input));

    let mut input = sample(Bootstrap::Al2023);
    input.bootstrap_arguments = Some("--foo".into());
    assert!(unsupported(&input));

    // EKS writes the bootstrap.sh call, with its own --max-pods.
    let mut input = managed(Bootstrap::Al2, Mode::ManagedEksAmi);
    input.max_pods = Some(20);
    assert!(unsupported(&input));
    let mut input = managed(Bootstrap::Al2, Mode::ManagedEksAmi);
    input.bootstrap_arguments = Some("--foo".into());
    assert!(unsupported(&input));

    let mut input = windows(Mode::SelfManaged);
    input.pre_bootstrap_commands = vec!["'</PowerShell>'".into()];
    assert!(unsupported(&input));
    let mut input = windows(Mode::SelfManaged);
    input.efs_mounts = sample(Bootstrap::Al2).efs_mounts;
    assert!(unsupported(&input));
    let mut input = windows(Mode::ManagedEksAmi);
    input.max_pods = Some(20);
    assert!(unsupported(&input));

    // -KubeletExtraArgs is split at spaces.
    let mut input = windows(Mode::SelfManaged);
    input.kubelet_config = vec![("kubeReserved".into(), json!({"memory": "1 Gi"}))];
    assert!(matches!(
        render(&input),
        Err(UserDataError::Separator { separator: ' ', .. })
    ));

    // The signal goes with self-managed groups, and only with them.
    let mut input = sample(Bootstrap::Al2023);
    input.signal = None;
    assert!(matches!(
        render(&input),
        Err(UserDataError::SignalMode { .. })
    ));
    let mut input = managed(Bootstrap::Al2023, Mode::ManagedCustomAmi);
    input.signal = Some(sample_signal());
    assert!(matches!(
        render(&input),
        Err(UserDataError::SignalMode { .. })
    ));

    // Bottlerocket labels are TOML keys: one key, one value.
    let mut input = bottlerocket(Mode::SelfManaged);
    input.labels = vec![label("a", "1"), label("a", "2")];
    assert!(matches!(
        render(&input),
        Err(UserDataError::DuplicateLabel(_))
    ));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn toml_quote_reads_back(text in "[^\u{1}]{0,40}") {
        let table: toml::Table = format!("k = {}", toml_quote(&text)).parse().expect("valid TOML");
        prop_assert_eq!(table["k"].as_str(), Some(text.as_str()));
    }
}

#[test]
fn user_parts_sit_between_the_nodeconfig_and_eksynths_script_under_a_boundary_none_contains() {
    for bootstrap in [Bootstrap::Al2023, Bootstrap::Al2] {
        let mut input = sample(bootstrap);
        input.user_data_parts = vec![
            ExtraPart {
                content_type: "text/cloud-config".into(),
                content: "runcmd: [echo one]\n".into(),
            },
            ExtraPart {
                content_type: "text/x-shellscript".into(),
                // A line that is eksynth's usual delimiter.
                content: "#!/bin/bash\ncat <<'EOF'\n--==EKSYNTH_BOUNDARY==\nEOF\n".into(),
            },
        ];
        let (boundary, parts) = parse_mime(&render_ok(&input));
        assert_ne!(boundary, "==EKSYNTH_BOUNDARY==", "{bootstrap:?}");
        let types: Vec<&str> = parts.iter().map(MimePart::content_type).collect();
        let mut expected = vec![
            "text/cloud-config; charset=\"utf-8\"",
            "text/x-shellscript; charset=\"utf-8\"",
            "text/x-shellscript; charset=\"utf-8\"",
        ];
        if bootstrap == Bootstrap::Al2023 {
            expected.insert(0, "application/node.eks.aws");
        }
        assert_eq!(types, expected, "{bootstrap:?}");
        let user = &parts[expected.len() - 2];
        assert!(
            user.body.contains("--==EKSYNTH_BOUNDARY==\n"),
            "{bootstrap:?}"
        );
        assert!(
            parts
                .last()
                .is_some_and(|p| p.body.contains("eksynth-signal"))
        );
    }
}

#[test]
fn a_managed_al2_group_on_the_eks_ami_with_only_parts_renders_only_them() {
    let mut input = bare(Bootstrap::Al2);
    input.mode = Mode::ManagedEksAmi;
    input.signal = None;
    input.user_data_parts = vec![ExtraPart {
        content_type: "text/x-shellscript".into(),
        content: "#!/bin/bash\necho mine\n".into(),
    }];
    let (_, parts) = parse_mime(&render_ok(&input));
    assert_eq!(parts.len(), 1);
    assert_eq!(parts[0].body.trim_end(), "#!/bin/bash\necho mine");
}

/// The JSON the AL2 kubelet drop-in merges into kubelet-config.json.
fn kubelet_config_json(script: &str) -> &str {
    let mut lines = script.lines();
    lines
        .find(|l| l.starts_with("cat > /etc/eksynth/kubelet-config.json <<"))
        .expect("the kubelet settings file");
    lines.next().expect("its JSON line")
}

#[test]
fn al2_kubelet_settings_are_merged_by_a_drop_in_after_bootstrap_sh() {
    // bootstrap.sh rewrites kubelet-config.json (evictionHard, kubeReserved,
    // clusterDNS...) and then starts kubelet: a merge before it would be
    // lost, so the settings are merged by an ExecStartPre drop-in.
    let doc = render_ok(&sample(Bootstrap::Al2));
    let script = &shell_parts(&doc)[0];
    let drop_in = script
        .find("kubelet.service.d/90-eksynth-kubelet-config.conf")
        .expect("drop-in");
    assert!(script.contains("ExecStartPre=/etc/eksynth/merge-kubelet-config"));
    assert!(
        !script.contains("jq --argjson extra"),
        "no merge before bootstrap.sh"
    );
    let bootstrap = script.find("/etc/eks/bootstrap.sh ").expect("bootstrap.sh");
    assert!(
        drop_in < bootstrap,
        "the drop-in is in place before bootstrap.sh reloads systemd"
    );
    let merged: Value = serde_json::from_str(kubelet_config_json(script)).expect("JSON");
    assert_eq!(
        merged["evictionHard"],
        json!({"memory.available": "200Mi", "nodefs.available": "10%"})
    );
}
