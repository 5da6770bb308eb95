//! What a Windows node's registration check really does. The check is the
//! C# that the Windows user data compiles with `Add-Type`; here Mono's `mcs`
//! compiles it as Windows PowerShell 5.1 would (C# 5, `System.dll` alone)
//! and `mono` runs it against a fake node: the kubelet's service command
//! line, its kubeconfig in the layout of the EKS Windows image
//! (`tests/signal_env/kubeconfig.windows.yaml`) with a stand-in credential
//! plugin, and a stand-in API server over HTTPS
//! (`tests/signal_env/apiserver.py`) whose certificate a cluster CA issued.
//! The PowerShell around it (the service lookup, the wait and the signal)
//! is not run: no PowerShell can be installed here.

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use eksynth::eks::userdata::*;

#[path = "common/user_data.rs"]
mod user_data;

mod common;

/// The private DNS name Start-EKSBootstrap.ps1 gives kubelet, as EC2
/// spells it in its host name.
const DNS_NAME: &str = "ip-10-0-1-23.eu-west-1.compute.internal";
/// The token the stand-in credential plugin hands out.
const TOKEN: &str = "k8s-aws-v1.token-of-the-node-role";

/// The Windows user data of a self-managed group.
fn user_data() -> String {
    render(&UserDataInput {
        api_server_endpoint: "https://0123456789ABCDEF.gr7.eu-west-1.eks.amazonaws.com".into(),
        certificate_authority: "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==".into(),
        ..user_data::self_managed(Bootstrap::Windows)
    })
    .expect("renders")
}

/// The C# source the user data hands to `Add-Type`.
fn check_source() -> String {
    let doc = user_data();
    let start = "$EksynthNodeSource = @'\n";
    let from = doc.find(start).expect("the C# source") + start.len();
    let to = from
        + doc[from..]
            .find("\n'@\n")
            .expect("the end of the C# source");
    doc[from..to].to_string()
}

/// Runs each attempt of the check and prints its answer: null (registered)
/// as `registered <name>`, an exception as its message (the user data's
/// `Test-EksynthRegistered` takes it as the reason).
const DRIVER: &str = r#"
public static class Driver {
  public static void Main(string[] a) {
    for (int i = 0; i < int.Parse(a[3]); i++) {
      string why;
      try {
        why = EksynthNode.Why(a[0], a[1], a[2]);
      } catch (System.Exception e) {
        why = e.Message;
      }
      System.Console.WriteLine(why ?? ("registered " + EksynthNode.Name));
    }
  }
}
"#;

/// A scratch directory with the compiled check, a cluster CA, the stand-in
/// plugin in `bin/`, and the stand-in API server.
struct Node {
    dir: PathBuf,
    server: Option<Child>,
    port: u16,
}

impl Node {
    /// None (skipped) when Mono is not installed.
    fn new(name: &str, registered_from: u32) -> Option<Node> {
        let dir = std::env::temp_dir().join(format!(
            "eksynth-signal-windows-{name}-{}",
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("bin")).expect("scratch directory");
        let mut node = Node {
            dir,
            server: None,
            port: 0,
        };
        node.compile()?;
        node.certificates();
        node.start_api_server(registered_from);
        node.write_plugin(&format!(
            "{{\"kind\":\"ExecCredential\",\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"spec\":{{}},\"status\":{{\"expirationTimestamp\":\"2026-01-01T00:14:00Z\",\"token\":\"{TOKEN}\"}}}}"
        ));
        node.write_kubeconfig(
            "kubeconfig",
            "ca.pem",
            &format!("https://127.0.0.1:{}", node.port),
        );
        Some(node)
    }

    fn path(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }

    /// The check as a library, as `Add-Type` compiles it (C# 5, nothing
    /// but `System.dll`), and the driver; None when `mcs` is not installed.
    fn compile(&self) -> Option<()> {
        fs::write(self.dir.join("check.cs"), check_source()).expect("write the check");
        fs::write(self.dir.join("driver.cs"), DRIVER).expect("write the driver");
        mcs(&[
            "-langversion:5".into(),
            "-noconfig".into(),
            "-r:System.dll".into(),
            "-target:library".into(),
            format!("-out:{}", self.path("check.dll")),
            self.path("check.cs"),
        ])?;
        mcs(&[
            "-noconfig".into(),
            "-r:System.dll".into(),
            format!("-r:{}", self.path("check.dll")),
            format!("-out:{}", self.path("driver.exe")),
            self.path("driver.cs"),
        ])
    }

    /// A cluster CA, the API server's certificate from it (for 127.0.0.1),
    /// another CA of the same name and one of another name. RSA, as EKS's
    /// are (and Mono reads no EC keys).
    fn certificates(&self) {
        for (ca, name) in [
            ("ca", "kubernetes"),
            ("impostor-ca", "kubernetes"),
            ("other-ca", "other"),
        ] {
            self.openssl(&[
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "1",
                "-subj",
                &format!("/CN={name}"),
                "-keyout",
                &format!("{ca}.key"),
                "-out",
                &format!("{ca}.pem"),
            ]);
        }
        self.openssl(&[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=kube-apiserver",
            "-keyout",
            "key.pem",
            "-out",
            "server.csr",
        ]);
        fs::write(self.dir.join("san.ext"), "subjectAltName=IP:127.0.0.1\n").expect("write");
        self.openssl(&[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "1",
            "-extfile",
            "san.ext",
            "-out",
            "cert.pem",
        ]);
    }

    fn openssl(&self, args: &[&str]) {
        let status = Command::new("openssl")
            .args(args)
            .current_dir(&self.dir)
            .stderr(Stdio::null())
            .status()
            .expect("openssl runs");
        assert!(status.success(), "openssl {args:?}");
    }

    fn start_api_server(&mut self, registered_from: u32) {
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
        self.server = Some(child);
        self.port = line.trim().parse().expect("a port number");
    }

    /// The stand-in `aws-iam-authenticator.exe`: it logs its arguments and
    /// prints `output` on one line, as the real one does.
    fn write_plugin(&self, output: &str) {
        let path = self.dir.join("bin/aws-iam-authenticator.exe");
        fs::write(
            &path,
            format!(
                "#!/bin/bash\nprintf '%s\\n' \"$*\" >> '{}'\nprintf '%s\\n' '{output}'\n",
                self.path("plugin.log")
            ),
        )
        .expect("write the plugin");
        let status = Command::new("chmod")
            .arg("+x")
            .arg(&path)
            .status()
            .expect("chmod runs");
        assert!(status.success());
    }

    fn write_kubeconfig(&self, name: &str, ca: &str, server: &str) {
        let template =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/signal_env/kubeconfig.windows.yaml");
        let text = fs::read_to_string(template).expect("the kubeconfig template");
        let text = text
            .replace("@CA@", &self.path(ca))
            .replace("@SERVER@", server)
            .replace("@BIN@", &self.path("bin"))
            // Start-EKSBootstrap.ps1 writes it with Set-Content: CRLF.
            .replace('\n', "\r\n");
        fs::write(self.dir.join(name), text).expect("write the kubeconfig");
    }

    /// The kubelet service's command line as Start-EKSBootstrap.ps1
    /// registers it, with `flags` for kubelet.
    fn kubelet(&self, flags: &str) -> String {
        format!(
            "\"C:\\Program Files\\Amazon\\EKS\\EKS-WindowsServiceHost.exe\" kubelet \
             \"C:\\Program Files\\kubernetes\\kubelet.exe\" --cloud-provider=external {flags}"
        )
    }

    /// The check's answers to `attempts` attempts.
    fn check(
        &self,
        kubelet: &str,
        host_name: &str,
        kubeconfig: &str,
        attempts: u32,
    ) -> Vec<String> {
        let out = Command::new("mono")
            .arg(self.path("driver.exe"))
            .args([kubelet, host_name, kubeconfig, &attempts.to_string()])
            .output()
            .expect("mono runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(String::from)
            .collect()
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
        if let Some(child) = &mut self.server {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// Compiles with Mono's C# compiler; None when it is not installed.
fn mcs(args: &[String]) -> Option<()> {
    let out = common::run_installed(Command::new("mcs").args(args), b"")?;
    assert!(
        out.status.success(),
        "mcs {args:?}\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Some(())
}

#[test]
fn the_node_reads_back_with_the_kubelets_credentials_under_its_last_hostname_override() {
    let Some(node) = Node::new("registered", 2) else {
        return;
    };
    // A later --hostname-override (from -KubeletExtraArgs) wins, lowercased
    // as kubelet does; the kubeconfig is the one kubelet is given.
    let kubelet = node.kubelet(&format!(
        "--kubeconfig=\"{}\" --hostname-override=ec2amaz-first --v=1 --hostname-override={}",
        node.path("kubeconfig"),
        DNS_NAME.to_uppercase()
    ));
    let answers = node.check(&kubelet, "EC2AMAZ-HOST", "C:\\nowhere\\kubeconfig", 2);
    assert_eq!(
        answers,
        [
            format!("node {DNS_NAME} is not registered (HTTP 404)"),
            format!("registered {DNS_NAME}"),
        ]
    );
    // The token came from the kubelet's own plugin, run with the arguments
    // of its kubeconfig, and went to the API server as a bearer token.
    assert_eq!(
        node.log("plugin"),
        ["token -i staging --region eu-west-1"; 2]
    );
    let read = format!("/api/v1/nodes/{DNS_NAME} {TOKEN}");
    assert_eq!(node.log("api"), [read.clone(), read]);
}

#[test]
fn without_kubelet_flags_it_takes_the_images_kubeconfig_and_the_host_name() {
    let Some(node) = Node::new("defaults", 1) else {
        return;
    };
    let answers = node.check(
        &node.kubelet("--v=1"),
        " EC2AMAZ-HOST ",
        &node.path("kubeconfig"),
        1,
    );
    assert_eq!(answers, ["registered ec2amaz-host"]);
    assert_eq!(
        node.log("api"),
        [format!("/api/v1/nodes/ec2amaz-host {TOKEN}")]
    );
}

/// A CA of the same name but another key fails the chain's signatures; one
/// of another name leaves the chain without it, which only the comparison
/// of the chain's root with the CA file catches.
#[test]
fn a_server_certificate_from_another_ca_gets_no_token() {
    let Some(node) = Node::new("other-ca", 1) else {
        return;
    };
    let server = format!("https://127.0.0.1:{}", node.port);
    let kubelet = node.kubelet(&format!("--kubeconfig={}", node.path("kubeconfig")));
    for ca in ["impostor-ca.pem", "other-ca.pem"] {
        node.write_kubeconfig("kubeconfig", ca, &server);
        let answers = node.check(&kubelet, DNS_NAME, "", 1);
        assert_eq!(
            answers,
            [format!(
                "the API server at {server} has no certificate from the cluster CA in {}",
                node.path(ca)
            )]
        );
    }
    assert!(node.log("api").is_empty(), "the token reached the server");
}

#[test]
fn what_failed_is_said() {
    let Some(node) = Node::new("failures", 1) else {
        return;
    };
    let kubeconfig = node.path("kubeconfig");
    let kubelet = node.kubelet(&format!("--kubeconfig={kubeconfig}"));
    // Nothing listens on the server's port.
    node.write_kubeconfig("kubeconfig", "ca.pem", "https://127.0.0.1:1/");
    assert_eq!(
        node.check(&kubelet, DNS_NAME, "", 1),
        ["no answer from the API server at https://127.0.0.1:1/"]
    );
    // The plugin gives no token.
    node.write_plugin("{\"kind\":\"ExecCredential\",\"status\":{}}");
    assert_eq!(
        node.check(&kubelet, DNS_NAME, "", 1),
        [format!(
            "no token from the kubelet's credential plugin ({}/aws-iam-authenticator.exe in {kubeconfig})",
            node.path("bin")
        )]
    );
    // No kubeconfig where kubelet's flag says.
    fs::remove_file(&kubeconfig).expect("remove the kubeconfig");
    let answer = node.check(&kubelet, DNS_NAME, "", 1);
    assert!(answer[0].contains(&kubeconfig), "{answer:?}");
    assert!(node.log("api").is_empty());
}
