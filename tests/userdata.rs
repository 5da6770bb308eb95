//! User data rendering: golden snapshots, MIME structure, NodeConfig
//! content, shell syntax and quoting round trips through a real bash.

use std::io::Write;
use std::process::{Command, Stdio};

use eksynth::eks::userdata::*;
use proptest::prelude::*;
use serde_json::{Value, json};

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
        cluster_name: CLUSTER.into(),
        api_server_endpoint: ENDPOINT.into(),
        certificate_authority: CA.into(),
        service_ipv4_cidr: "10.100.0.0/16".into(),
        dns_cluster_ip: "10.100.0.10".into(),
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
        pre_bootstrap_commands: vec![
            "yum install -y amazon-ssm-agent".into(),
            "echo \"node for ${HOSTNAME}\" > /etc/motd".into(),
        ],
        efs_mounts: vec![EfsMount {
            file_system_id: "fs-0123456789abcdef0".into(),
            mount_point: "/mnt/efs".into(),
            dns_name: format!("fs-0123456789abcdef0.efs.{REGION}.{URL_SUFFIX}"),
        }],
        block_pod_imds: true,
        signal: Signal {
            stack_name: STACK.into(),
            logical_id: LOGICAL_ID.into(),
            region: REGION.into(),
            url_suffix: URL_SUFFIX.into(),
            timeout_seconds: 900,
        },
    }
}

/// The smallest input: no labels, taints, settings, commands or mounts.
fn bare(bootstrap: Bootstrap) -> UserDataInput {
    UserDataInput {
        labels: vec![],
        taints: vec![],
        max_pods: None,
        kubelet_config: vec![],
        pre_bootstrap_commands: vec![],
        efs_mounts: vec![],
        block_pod_imds: false,
        ..sample(bootstrap)
    }
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
    let mut child = Command::new("bash")
        .arg("-n")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bash runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(script.as_bytes())
        .expect("write to bash");
    let out = child.wait_with_output().expect("bash finishes");
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

#[test]
fn al2023_bare_snapshot() {
    insta::assert_snapshot!(visible(&render_ok(&bare(Bootstrap::Al2023))));
}

#[test]
fn al2_bare_snapshot() {
    insta::assert_snapshot!(visible(&render_ok(&bare(Bootstrap::Al2))));
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
    if !have("python3") {
        eprintln!("python3 not found; skipping");
        return;
    }
    let program = r##"
import email, sys
message = email.message_from_string(sys.stdin.read())
assert message.is_multipart(), "not multipart"
assert message.get_content_type() == "multipart/mixed"
print(",".join(part.get_content_type() for part in message.get_payload()))
for part in message.get_payload():
    assert part.get_payload().startswith(("---", "#!/bin/bash")), part.get_payload()[:40]
"##;
    for (bootstrap, expected) in [
        (
            Bootstrap::Al2023,
            "application/node.eks.aws,text/x-shellscript",
        ),
        (Bootstrap::Al2, "text/x-shellscript"),
    ] {
        let doc = render_ok(&sample(bootstrap));
        let mut child = Command::new("python3")
            .arg("-c")
            .arg(program)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("python3 runs");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(resolved(&doc).as_bytes())
            .expect("write to python3");
        let out = child.wait_with_output().expect("python3 finishes");
        assert!(
            out.status.success(),
            "python3 rejected the document: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), expected);
    }
}

// ------------------------------------------------------------------- shell

#[test]
fn every_script_passes_bash_syntax_check() {
    if !have("bash") {
        eprintln!("bash not found; skipping");
        return;
    }
    for bootstrap in [Bootstrap::Al2023, Bootstrap::Al2] {
        for (kind, input) in [("full", sample(bootstrap)), ("bare", bare(bootstrap))] {
            let name = format!("{bootstrap:?}-{kind}");
            let doc = render_ok(&input);
            for (i, script) in shell_parts(&doc).iter().enumerate() {
                bash_syntax_ok(&format!("{name}-part{i}.sh"), script);
                let signaller = heredoc(script, "EKSYNTH_SIGNAL_EOF");
                bash_syntax_ok(&format!("{name}-signal.sh"), &signaller);
                if input.block_pod_imds {
                    let imds = heredoc(script, "EKSYNTH_IMDS_EOF");
                    bash_syntax_ok(&format!("{name}-imds.sh"), &imds);
                }
            }
        }
    }
    let signaller = render_signaller(&sample(Bootstrap::Al2023).signal).expect("renders");
    bash_syntax_ok("signaller.sh", &signaller);
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

    // The jq merge gets the remaining kubelet settings as JSON.
    let line = script
        .lines()
        .find(|l| l.starts_with("jq --argjson extra "))
        .expect("jq merge");
    let arg = line
        .strip_prefix("jq --argjson extra ")
        .and_then(|l| l.split(" '. * $extra'").next())
        .expect("jq argument");
    let json_text = &bash_words(&format!("printf '%s\\0' {arg}"))[0];
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
fn signaller_signs_its_own_request_for_the_exact_resource() {
    let signaller = render_signaller(&sample(Bootstrap::Al2023).signal).expect("renders");
    assert!(signaller.contains(&format!("LOGICAL_ID='{LOGICAL_ID}'\n")));
    assert!(signaller.contains(&format!("STACK_NAME='{STACK}'\n")));
    assert!(signaller.contains("TIMEOUT_SECONDS='900'\n"));
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
        let doc = render_ok(&sample(bootstrap));
        assert!(!doc.contains("cfn-signal"));
        assert!(!doc.contains("/opt/aws/bin"));
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
                "TIMEOUT_SECONDS=",
            ]
            .iter()
            .any(|p| l.starts_with(p))
        })
        .collect();
    let words = bash_words(&format!(
        "{}\nprintf '%s\\0' \"$STACK_NAME\" \"$LOGICAL_ID\" \"$REGION\" \"$URL_SUFFIX\" \"$TIMEOUT_SECONDS\"",
        assignments.join("\n")
    ));
    assert_eq!(
        words,
        [
            signal.stack_name.as_str(),
            "Group1AutoScalingGroup",
            REGION,
            URL_SUFFIX,
            "42"
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
        assert!(unit.contains("Type=simple\n"));
        assert!(unit.contains("/usr/bin/timeout 1500 /usr/local/bin/eksynth-signal"));
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
