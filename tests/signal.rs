//! What an AL2023 or AL2 node's signal really does, run in bash with a
//! stand-in `cfn-signal` on `PATH` that records its arguments, a stand-in
//! `curl` for kubelet's health endpoint, and a `sleep` that barely waits:
//! SUCCESS only once kubelet answers, FAILURE at once from the user data's
//! ERR trap, FAILURE with its reason at the node's deadline, bounded retries.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use eksynth::eks::userdata::*;

const STACK: &str = "staging-nodes";
const LOGICAL_ID: &str = "Staging1NodeGroup";
const REGION: &str = "eu-west-1";

fn signal(timeout_seconds: u32) -> Signal {
    Signal {
        stack_name: STACK.into(),
        logical_id: LOGICAL_ID.into(),
        region: REGION.into(),
        url_suffix: "amazonaws.com".into(),
        timeout_seconds,
        client: SignalClient::Image,
        post_bootstrap_commands: vec![],
    }
}

/// A scratch directory with stand-in programs in `bin/`.
struct Node {
    dir: PathBuf,
}

impl Node {
    /// `healthy_from`: the call of `curl` from which kubelet answers `ok`
    /// (`None`: never). `signal_failures`: how many `cfn-signal` calls fail
    /// before one succeeds.
    fn new(name: &str, healthy_from: Option<u32>, signal_failures: u32) -> Node {
        let dir =
            std::env::temp_dir().join(format!("eksynth-signal-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("bin")).expect("scratch directory");
        let healthy_from = healthy_from.map_or("999999".to_string(), |n| n.to_string());
        let d = dir.display();
        stub(
            &dir,
            "cfn-signal",
            &format!(
                "printf '%s\\n' \"$*\" >> '{d}/cfn-signal.log'\n\
                 n=$(wc -l < '{d}/cfn-signal.log')\n\
                 [ \"$n\" -gt {signal_failures} ]"
            ),
        );
        stub(
            &dir,
            "curl",
            &format!(
                "printf '%s\\n' \"$*\" >> '{d}/curl.log'\n\
                 n=$(wc -l < '{d}/curl.log')\n\
                 if [ \"$n\" -ge {healthy_from} ]; then printf ok; fi"
            ),
        );
        stub(&dir, "sleep", "exec /bin/sleep 0.01");
        stub(
            &dir,
            "systemctl",
            &format!("printf '%s\\n' \"$*\" >> '{d}/systemctl.log'"),
        );
        Node { dir }
    }

    /// Runs `script` with the stand-ins first on `PATH`.
    fn run(&self, script: &str, args: &[&str]) -> Output {
        let path = format!(
            "{}:{}",
            self.dir.join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let file = self.dir.join("script.sh");
        fs::write(&file, script).expect("write the script");
        Command::new("bash")
            .arg(&file)
            .args(args)
            .env("PATH", path)
            .output()
            .expect("bash runs")
    }

    fn log(&self, name: &str) -> Vec<String> {
        fs::read_to_string(self.dir.join(format!("{name}.log")))
            .unwrap_or_default()
            .lines()
            .map(String::from)
            .collect()
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

fn stub(dir: &Path, name: &str, body: &str) {
    let path = dir.join("bin").join(name);
    fs::write(&path, format!("#!/bin/bash\n{body}\n")).expect("write a stand-in");
    let status = Command::new("chmod")
        .arg("+x")
        .arg(&path)
        .status()
        .expect("chmod runs");
    assert!(status.success());
}

/// The `cfn-signal` arguments for `code` and `reason`.
fn signal_args(code: u32, reason: &str) -> String {
    format!("--stack {STACK} --resource {LOGICAL_ID} --region {REGION} -e {code} --reason {reason}")
}

#[test]
fn success_is_signalled_only_once_kubelet_answers() {
    let node = Node::new("success", Some(3), 0);
    let out = node.run(&render_signaller(&signal(900)).expect("renders"), &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Two unanswered polls of the health endpoint, then the answer.
    let polls = node.log("curl");
    assert_eq!(polls.len(), 3);
    assert!(
        polls
            .iter()
            .all(|p| p.ends_with("http://127.0.0.1:10248/healthz"))
    );
    assert_eq!(
        node.log("cfn-signal"),
        [signal_args(0, "kubelet is healthy")]
    );
}

#[test]
fn failure_is_signalled_with_its_reason_at_the_nodes_deadline() {
    // A 2-second timeout leaves the node 1 second; CloudFormation's own
    // 15 minutes leave it 10.
    assert_eq!(node_deadline_seconds(2), 1);
    assert_eq!(node_deadline_seconds(900), 600);
    let node = Node::new("deadline", None, 0);
    let out = node.run(&render_signaller(&signal(2)).expect("renders"), &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!node.log("curl").is_empty());
    assert_eq!(
        node.log("cfn-signal"),
        [signal_args(1, "kubelet not healthy after 1s")]
    );
}

#[test]
fn signalling_is_retried_a_bounded_number_of_times() {
    let node = Node::new("retries", Some(1), 2);
    let out = node.run(&render_signaller(&signal(900)).expect("renders"), &[]);
    assert!(out.status.success());
    assert_eq!(
        node.log("cfn-signal").len(),
        3,
        "two failures, then success"
    );

    let node = Node::new("gives-up", Some(1), 100);
    let out = node.run(&render_signaller(&signal(900)).expect("renders"), &[]);
    assert!(!out.status.success());
    assert_eq!(node.log("cfn-signal").len(), 5);
}

/// The shell part of a self-managed AL2023 group whose pre-bootstrap command
/// fails, with the signaller and its unit written to the scratch directory.
fn failing_user_data(node: &Node, bootstrap: Bootstrap) -> String {
    let input = UserDataInput {
        bootstrap,
        mode: Mode::SelfManaged,
        cluster_name: "staging".into(),
        api_server_endpoint: "https://example.eks.amazonaws.com".into(),
        certificate_authority: "Q0E=".into(),
        service_ipv4_cidr: Some("10.100.0.0/16".into()),
        service_ipv6_cidr: None,
        dns_cluster_ip: "10.100.0.10".into(),
        labels: vec![],
        taints: vec![],
        max_pods: None,
        kubelet_config: vec![],
        node_config: None,
        pre_bootstrap_commands: vec!["exit 3".into()],
        efs_mounts: vec![],
        user_data_parts: vec![],
        bottlerocket_settings: Default::default(),
        block_pod_imds: false,
        signal: Some(signal(900)),
        bootstrap_arguments: None,
        instance_store_raid0: false,
    };
    let doc = render(&input).expect("renders");
    let start = doc.find("#!/bin/bash").expect("a shell part");
    let end = doc[start..].find("\n--==").expect("end of the part") + start;
    let d = node.dir.display();
    doc[start..end]
        .replace("/usr/local/bin/", &format!("{d}/"))
        .replace("/etc/systemd/system/", &format!("{d}/"))
}

#[test]
fn a_failing_user_data_step_signals_failure_at_once() {
    for bootstrap in [Bootstrap::Al2023, Bootstrap::Al2] {
        let node = Node::new(&format!("trap-{bootstrap:?}"), Some(1), 0);
        let script = failing_user_data(&node, bootstrap);
        // The line of the command that failed: `bash -c` in run_command.
        let line = script
            .lines()
            .position(|l| l.starts_with("run_command() {") && l.contains("/bin/bash -c"))
            .expect("the command")
            + 1;
        let out = node.run(&script, &[]);
        assert_eq!(out.status.code(), Some(3), "the step's own exit status");
        assert_eq!(
            node.log("cfn-signal"),
            [signal_args(1, &format!("user data failed at line {line}"))]
        );
        // No wait for kubelet, and the signaller is never started.
        assert!(node.log("curl").is_empty());
        assert!(!node.log("systemctl").iter().any(|l| l.starts_with("start")));
    }
}

/// The signaller of a group with post-bootstrap commands.
fn signal_after(commands: &[&str]) -> Signal {
    Signal {
        post_bootstrap_commands: commands.iter().map(|c| c.to_string()).collect(),
        ..signal(900)
    }
}

#[test]
fn post_bootstrap_commands_run_once_kubelet_is_healthy_then_success_is_signalled() {
    let node = Node::new("post-bootstrap", Some(2), 0);
    let marker = node.dir.join("ran.log");
    let commands = [
        format!(
            "printf 'first %s\\n' \"$(wc -l < '{d}/curl.log')\" >> '{m}'",
            d = node.dir.display(),
            m = marker.display()
        ),
        format!("echo second >> '{}'", marker.display()),
    ];
    let commands: Vec<&str> = commands.iter().map(String::as_str).collect();
    let out = node.run(
        &render_signaller(&signal_after(&commands)).expect("renders"),
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Both ran, in order, after the second poll of kubelet answered.
    let ran = fs::read_to_string(&marker).expect("the commands ran");
    assert_eq!(ran, "first 2\nsecond\n");
    assert_eq!(
        node.log("cfn-signal"),
        [signal_args(0, "kubelet is healthy")]
    );
}

#[test]
fn a_failing_post_bootstrap_command_signals_failure_and_stops_there() {
    let node = Node::new("post-bootstrap-fails", Some(1), 0);
    let marker = node.dir.join("ran.log");
    let after = format!("echo ran >> '{}'", marker.display());
    let out = node.run(
        &render_signaller(&signal_after(&["true", "exit 7", &after])).expect("renders"),
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        node.log("cfn-signal"),
        [signal_args(
            1,
            "post-bootstrap command 2 failed (exit status 7)"
        )]
    );
    assert!(
        !marker.exists(),
        "no command runs after the one that failed"
    );
}
