//! What an AL2023 or AL2 node's signal really does, run in bash against a
//! fake node: a stand-in `cfn-signal` (or, for the embedded signaller, a
//! stand-in instance metadata service and CloudFormation endpoint) that
//! records what is signalled, a stand-in for kubelet's health endpoint, a
//! process named like kubelet with its `--hostname-override`, the kubelet's
//! kubeconfig with a stand-in credential plugin, a stand-in API server over
//! HTTPS (`tests/signal_env/apiserver.py`), and a `sleep` that barely
//! waits. SUCCESS only once kubelet answers and the node's own Node object
//! reads back; FAILURE naming what failed at the node's deadline; FAILURE at
//! once from the user data's ERR trap; bounded retries.

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use eksynth::eks::userdata::*;

#[path = "common/user_data.rs"]
mod user_data;

const STACK: &str = "staging-nodes";
const LOGICAL_ID: &str = "Staging1NodeGroup";
const REGION: &str = "eu-west-1";
/// The private DNS name nodeadm and bootstrap.sh give kubelet.
const DNS_NAME: &str = "ip-10-0-1-23.eu-west-1.compute.internal";
/// The token the stand-in credential plugins hand out.
const TOKEN: &str = "k8s-aws-v1.token-of-the-node-role";

fn signal(timeout_seconds: u32) -> Signal {
    Signal {
        stack_name: STACK.into(),
        logical_id: LOGICAL_ID.into(),
        region: REGION.into(),
        url_suffix: "amazonaws.com".into(),
        timeout_seconds,
        client: SignalClient::Image,
        kubelet_unit: "kubelet.service".into(),
        post_bootstrap_commands: vec![],
    }
}

/// What the fake node does.
struct Env {
    /// The poll of kubelet's health endpoint from which it answers `ok`
    /// (`None`: never).
    healthy_from: Option<u32>,
    /// The read of the node's Node object from which the API server has it
    /// (`None`: never).
    registered_from: Option<u32>,
    /// How many `cfn-signal` calls fail before one succeeds.
    signal_failures: u32,
    /// The kubeconfig layout (`al2023` or `al2`).
    kubeconfig: &'static str,
    /// kubelet's arguments after its name.
    kubelet_args: Vec<String>,
    /// The systemd unit whose main process is kubelet.
    kubelet_unit: &'static str,
}

impl Default for Env {
    fn default() -> Env {
        Env {
            healthy_from: Some(1),
            registered_from: Some(1),
            signal_failures: 0,
            kubeconfig: "al2023",
            kubelet_args: vec![
                "--config=/etc/kubernetes/kubelet/config.json".into(),
                format!("--hostname-override={DNS_NAME}"),
            ],
            kubelet_unit: "kubelet.service",
        }
    }
}

/// A scratch directory with stand-in programs in `bin/`, and the stand-in
/// kubelet and API server processes.
struct Node {
    dir: PathBuf,
    children: Vec<Child>,
}

impl Node {
    fn new(name: &str, env: Env) -> Node {
        let dir =
            std::env::temp_dir().join(format!("eksynth-signal-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("bin")).expect("scratch directory");
        let mut node = Node {
            dir,
            children: vec![],
        };
        let port = node.start_api_server(env.registered_from.unwrap_or(0));
        let kubelet = node.start_kubelet(&env.kubelet_args);
        node.write_kubeconfig(env.kubeconfig, port);
        node.write_stubs(&env, kubelet);
        node
    }

    /// A certificate for 127.0.0.1, which the kubeconfig names as the CA,
    /// and the stand-in API server with it; its port.
    fn start_api_server(&mut self, registered_from: u32) -> u16 {
        let status = Command::new("openssl")
            .args(["req", "-x509", "-newkey", "ec", "-pkeyopt"])
            .args(["ec_paramgen_curve:prime256v1", "-nodes", "-days", "1"])
            .args([
                "-subj",
                "/CN=127.0.0.1",
                "-addext",
                "subjectAltName=IP:127.0.0.1",
            ])
            .arg("-keyout")
            .arg(self.dir.join("key.pem"))
            .arg("-out")
            .arg(self.dir.join("cert.pem"))
            .stderr(Stdio::null())
            .status()
            .expect("openssl runs");
        assert!(status.success(), "openssl makes a certificate");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/signal_env/apiserver.py");
        let mut child = Command::new("python3")
            .arg(script)
            .arg(&self.dir)
            .arg(registered_from.to_string())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("the port");
        self.children.push(child);
        line.trim().parse().expect("a port number")
    }

    /// A process whose command line is kubelet's: it waits on its stdin.
    fn start_kubelet(&mut self, args: &[String]) -> u32 {
        let child = Command::new("bash")
            .args(["-c", "read -r _", "kubelet"])
            .args(args)
            .stdin(Stdio::piped())
            .spawn()
            .expect("bash runs");
        let pid = child.id();
        self.children.push(child);
        pid
    }

    fn write_kubeconfig(&self, layout: &str, port: u16) {
        let template = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("tests/signal_env/kubeconfig.{layout}.yaml"));
        let text = fs::read_to_string(template).expect("the kubeconfig template");
        let text = text
            .replace("@CA@", &self.dir.join("cert.pem").display().to_string())
            .replace("@SERVER@", &format!("https://127.0.0.1:{port}"))
            .replace("@BIN@", &self.dir.join("bin").display().to_string());
        fs::write(self.dir.join("kubeconfig"), text).expect("write the kubeconfig");
    }

    fn write_stubs(&self, env: &Env, kubelet: u32) {
        let d = self.dir.display();
        let healthy_from = env.healthy_from.map_or(999_999, |n| n);
        let signal_failures = env.signal_failures;
        let kubelet_unit = env.kubelet_unit;
        stub(
            &self.dir,
            "cfn-signal",
            &format!(
                "printf '%s\\n' \"$*\" >> '{d}/cfn-signal.log'\n\
                 n=$(wc -l < '{d}/cfn-signal.log')\n\
                 [ \"$n\" -gt {signal_failures} ]"
            ),
        );
        // kubelet's health endpoint, the instance metadata service and
        // CloudFormation are stand-ins; the API server is reached for real.
        // The CloudFormation stand-in reads the credentials the signaller
        // writes to curl's stdin, as curl does.
        let real_curl = which("curl");
        stub(
            &self.dir,
            "curl",
            &format!(
                "case \"$*\" in\n\
                 *127.0.0.1:10248/healthz*)\n\
                   printf '%s\\n' \"$*\" >> '{d}/healthz.log'\n\
                   n=$(wc -l < '{d}/healthz.log')\n\
                   if [ \"$n\" -ge {healthy_from} ]; then printf ok; fi ;;\n\
                 *169.254.169.254*/api/token) printf imds-token ;;\n\
                 *169.254.169.254*/instance-id) printf i-0123456789abcdef0 ;;\n\
                 *169.254.169.254*/security-credentials/) printf 'node-role\\n' ;;\n\
                 *169.254.169.254*/security-credentials/node-role)\n\
                   printf '{{\"AccessKeyId\":\"AKID\",\"SecretAccessKey\":\"secret\",\"Token\":\"session\"}}' ;;\n\
                 *cloudformation.*)\n\
                   cat > /dev/null\n\
                   for a in \"$@\"; do case $a in Status=*) echo \"${{a#Status=}}\" >> '{d}/signalled.log' ;; esac; done\n\
                   printf '\\n200' ;;\n\
                 *) exec '{real_curl}' \"$@\" ;;\n\
                 esac"
            ),
        );
        // `aws eks get-token` writes its ExecCredential indented.
        let plugin = format!(
            "printf '%s %s\\n' \"${{0##*/}}\" \"$*\" >> '{d}/plugin.log'\n\
             printf '{{\\n  \"kind\": \"ExecCredential\",\\n  \"apiVersion\": \"client.authentication.k8s.io/v1beta1\",\\n  \"status\": {{\\n    \"expirationTimestamp\": \"2026-01-01T00:14:00Z\",\\n    \"token\": \"{TOKEN}\"\\n  }}\\n}}\\n'"
        );
        stub(&self.dir, "aws", &plugin);
        // aws-iam-authenticator writes its ExecCredential on one line.
        stub(
            &self.dir,
            "aws-iam-authenticator",
            &format!(
                "printf '%s %s\\n' \"${{0##*/}}\" \"$*\" >> '{d}/plugin.log'\n\
                 printf '{{\"kind\":\"ExecCredential\",\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"spec\":{{}},\"status\":{{\"expirationTimestamp\":\"2026-01-01T00:14:00Z\",\"token\":\"{TOKEN}\"}}}}\\n'"
            ),
        );
        stub(&self.dir, "sleep", "exec /bin/sleep 0.01");
        stub(
            &self.dir,
            "systemctl",
            &format!(
                "if [ \"$1 $2 $3 $4\" = 'show -p MainPID {kubelet_unit}' ]; then\n\
                   echo MainPID={kubelet}\n\
                 else\n\
                   printf '%s\\n' \"$*\" >> '{d}/systemctl.log'\n\
                 fi"
            ),
        );
    }

    /// Runs `script` with the stand-ins first on `PATH` and the kubelet's
    /// kubeconfig in the scratch directory.
    fn run(&self, script: &str, args: &[&str]) -> Output {
        let path = format!(
            "{}:{}",
            self.dir.join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let file = self.dir.join("script.sh");
        let kubeconfig = self.dir.join("kubeconfig").display().to_string();
        fs::write(
            &file,
            script.replace("/var/lib/kubelet/kubeconfig", &kubeconfig),
        )
        .expect("write the script");
        Command::new("bash")
            .arg(&file)
            .args(args)
            .env("PATH", path)
            // As under systemd: the embedded signaller then logs to stderr
            // only, not to the host's journal.
            .env("INVOCATION_ID", "test")
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
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
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

fn which(program: &str) -> String {
    let out = Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .expect("sh runs");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The `cfn-signal` arguments for `code` and `reason`.
fn signal_args(code: u32, reason: &str) -> String {
    format!("--stack {STACK} --resource {LOGICAL_ID} --region {REGION} -e {code} --reason {reason}")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn registered_reason() -> String {
    format!("node {DNS_NAME} is registered")
}

#[test]
fn success_is_signalled_only_once_kubelet_answers_and_the_node_is_registered() {
    let node = Node::new(
        "success",
        Env {
            healthy_from: Some(3),
            registered_from: Some(2),
            ..Env::default()
        },
    );
    let out = node.run(&render_signaller(&signal(900)).expect("renders"), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    // Two unanswered polls of the health endpoint, then the answer; then
    // one read of the Node that is not there yet, and one that is.
    assert_eq!(node.log("healthz").len(), 3);
    let read = format!("/api/v1/nodes/{DNS_NAME} {TOKEN}");
    assert_eq!(node.log("api"), [read.clone(), read]);
    // The token came from the kubelet's own credential plugin, run with the
    // arguments of its kubeconfig.
    assert_eq!(
        node.log("plugin")[0],
        "aws eks get-token --cluster-name staging --region eu-west-1"
    );
    assert_eq!(
        node.log("cfn-signal"),
        [signal_args(0, &registered_reason())]
    );
}

#[test]
fn a_healthy_kubelet_whose_node_never_registers_signals_failure_saying_so() {
    let node = Node::new(
        "unregistered",
        Env {
            registered_from: None,
            ..Env::default()
        },
    );
    // A 4-second timeout leaves the node 2 seconds: at least one whole
    // second passes whatever the clock showed at the start.
    let out = node.run(&render_signaller(&signal(4)).expect("renders"), &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // It kept asking until the deadline.
    assert!(node.log("api").len() > 1);
    assert_eq!(
        node.log("cfn-signal"),
        [signal_args(
            1,
            &format!("not registered after 2s: node {DNS_NAME} is not registered (HTTP 404)")
        )]
    );
}

#[test]
fn failure_is_signalled_with_its_reason_at_the_nodes_deadline() {
    // A 2-second timeout leaves the node 1 second; CloudFormation's own
    // 15 minutes leave it 10.
    assert_eq!(node_deadline_seconds(2), 1);
    assert_eq!(node_deadline_seconds(900), 600);
    let node = Node::new(
        "deadline",
        Env {
            healthy_from: None,
            ..Env::default()
        },
    );
    let out = node.run(&render_signaller(&signal(2)).expect("renders"), &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!node.log("healthz").is_empty());
    // An unhealthy kubelet is not asked about; the reason says which it was.
    assert!(node.log("api").is_empty());
    assert_eq!(
        node.log("cfn-signal"),
        [signal_args(1, "kubelet not healthy after 1s")]
    );
}

#[test]
fn the_node_is_read_under_the_name_kubelet_was_given_last() {
    // nodeadm's InstanceIdNodeName gate names the node after its instance
    // ID; a later flag of the user's wins, lowercased as kubelet does.
    let node = Node::new(
        "instance-id",
        Env {
            kubelet_args: vec![
                format!("--hostname-override={DNS_NAME}"),
                "--hostname-override".into(),
                "I-0123456789ABCDEF0".into(),
            ],
            ..Env::default()
        },
    );
    let out = node.run(&render_signaller(&signal(900)).expect("renders"), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        node.log("api"),
        [format!("/api/v1/nodes/i-0123456789abcdef0 {TOKEN}")]
    );
    assert_eq!(
        node.log("cfn-signal"),
        [signal_args(0, "node i-0123456789abcdef0 is registered")]
    );
}

#[test]
fn an_al2_node_reads_itself_with_aws_iam_authenticator_as_its_kubeconfig_says() {
    let node = Node::new(
        "al2",
        Env {
            kubeconfig: "al2",
            ..Env::default()
        },
    );
    let out = node.run(&render_signaller(&signal(900)).expect("renders"), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        node.log("plugin"),
        ["aws-iam-authenticator token -i staging --region eu-west-1"]
    );
    assert_eq!(
        node.log("cfn-signal"),
        [signal_args(0, &registered_reason())]
    );
}

#[test]
fn a_node_without_the_kubelets_credentials_signals_failure_saying_so() {
    let node = Node::new("no-kubeconfig", Env::default());
    fs::remove_file(node.dir.join("kubeconfig")).expect("remove the kubeconfig");
    let out = node.run(&render_signaller(&signal(2)).expect("renders"), &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(node.log("api").is_empty());
    let kubeconfig = node.dir.join("kubeconfig");
    assert_eq!(
        node.log("cfn-signal"),
        [signal_args(
            1,
            &format!(
                "not registered after 1s: no token from the kubelet's credential plugin (none in {})",
                kubeconfig.display()
            )
        )]
    );
}

#[test]
fn signalling_is_retried_a_bounded_number_of_times() {
    let retries = Env {
        signal_failures: 2,
        ..Env::default()
    };
    let node = Node::new("retries", retries);
    let out = node.run(&render_signaller(&signal(900)).expect("renders"), &[]);
    assert!(out.status.success());
    assert_eq!(
        node.log("cfn-signal").len(),
        3,
        "two failures, then success"
    );

    let gives_up = Env {
        signal_failures: 100,
        ..Env::default()
    };
    let node = Node::new("gives-up", gives_up);
    let out = node.run(&render_signaller(&signal(900)).expect("renders"), &[]);
    assert!(!out.status.success());
    assert_eq!(node.log("cfn-signal").len(), 5);
}

/// The embedded signaller of a custom image.
fn embedded(timeout_seconds: u32) -> Signal {
    Signal {
        client: SignalClient::Embedded,
        ..signal(timeout_seconds)
    }
}

#[test]
fn the_embedded_signaller_signals_success_only_for_a_registered_node() {
    let node = Node::new("embedded", Env::default());
    let out = node.run(&render_signaller(&embedded(900)).expect("renders"), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(node.log("api").len(), 1);
    assert_eq!(node.log("signalled"), ["SUCCESS"]);

    let node = Node::new(
        "embedded-unregistered",
        Env {
            registered_from: None,
            ..Env::default()
        },
    );
    let out = node.run(&render_signaller(&embedded(4)).expect("renders"), &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(node.log("api").len() > 1);
    assert_eq!(node.log("signalled"), ["FAILURE"]);
    assert!(stderr(&out).contains(&format!(
        "not registered after 2s: node {DNS_NAME} is not registered (HTTP 404)"
    )));

    let node = Node::new(
        "embedded-unhealthy",
        Env {
            healthy_from: None,
            ..Env::default()
        },
    );
    let out = node.run(&render_signaller(&embedded(2)).expect("renders"), &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(node.log("api").is_empty());
    assert_eq!(node.log("signalled"), ["FAILURE"]);
    assert!(stderr(&out).contains("kubelet not healthy after 1s"));
}

#[test]
fn an_ubuntu_node_is_named_by_the_kubelet_of_the_snaps_unit() {
    // Canonical's images run kubelet as the `kubelet-eks` snap; its unit's
    // main process carries the `--hostname-override` bootstrap.sh sets, and
    // the kubeconfig is where AL2's is.
    let node = Node::new(
        "ubuntu",
        Env {
            kubeconfig: "al2",
            kubelet_unit: "snap.kubelet-eks.daemon.service",
            ..Env::default()
        },
    );
    let signal = Signal {
        kubelet_unit: "snap.kubelet-eks.daemon.service".into(),
        ..embedded(900)
    };
    let out = node.run(&render_signaller(&signal).expect("renders"), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        node.log("api"),
        [format!("/api/v1/nodes/{DNS_NAME} {TOKEN}")]
    );
    assert_eq!(node.log("signalled"), ["SUCCESS"]);
}

/// The shell part of a self-managed AL2023 group whose pre-bootstrap command
/// fails, with the signaller and its unit written to the scratch directory.
fn failing_user_data(node: &Node, bootstrap: Bootstrap) -> String {
    let input = UserDataInput {
        pre_bootstrap_commands: vec!["exit 3".into()],
        signal: Some(signal(900)),
        ..user_data::self_managed(bootstrap)
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
        let node = Node::new(&format!("trap-{bootstrap:?}"), Env::default());
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
        assert!(node.log("healthz").is_empty());
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
fn post_bootstrap_commands_run_once_the_node_is_registered_then_success_is_signalled() {
    let node = Node::new(
        "post-bootstrap",
        Env {
            healthy_from: Some(2),
            registered_from: Some(2),
            ..Env::default()
        },
    );
    let marker = node.dir.join("ran.log");
    let commands = [
        format!(
            "printf 'first %s %s\\n' \"$(wc -l < '{d}/healthz.log')\" \"$(wc -l < '{d}/api.log')\" >> '{m}'",
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
    assert!(out.status.success(), "{}", stderr(&out));
    // Both ran, in order, after the second poll of kubelet answered and the
    // second read found the node.
    let ran = fs::read_to_string(&marker).expect("the commands ran");
    assert_eq!(ran, "first 2 2\nsecond\n");
    assert_eq!(
        node.log("cfn-signal"),
        [signal_args(0, &registered_reason())]
    );
}

#[test]
fn a_failing_post_bootstrap_command_signals_failure_and_stops_there() {
    let node = Node::new("post-bootstrap-fails", Env::default());
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
