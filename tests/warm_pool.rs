//! A self-managed AL2023 or AL2 node in a warm pool, walked through its
//! life in bash against a stand-in instance metadata service whose
//! `autoscaling/target-lifecycle-state` the test sets, with systemd
//! played by the test: the user data runs at the first boot, then the
//! unit that joins (the AMI's `nodeadm-run.service` with eksynth's drop-in
//! on AL2023, eksynth's `eksynth-join.service` on AL2) runs its commands
//! in order at each boot. A warmed instance prepares (its pre-bootstrap
//! commands run) but neither joins (no `nodeadm init`, no `bootstrap.sh`)
//! nor signals (the signaller is never started) while it waits, stopped or
//! hibernated; once in service it joins and signals exactly once, and a
//! later boot does not signal again.

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::Duration;

use eksynth::eks::userdata::*;

#[path = "common/user_data.rs"]
mod user_data;

/// A scratch directory standing for the instance's disk, with stand-in
/// programs in `bin/`.
struct Instance {
    dir: PathBuf,
}

impl Instance {
    fn new(name: &str) -> Instance {
        let dir = std::env::temp_dir().join(format!("eksynth-warm-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("bin")).expect("scratch directory");
        let instance = Instance { dir };
        instance.set_state("Warmed:Pending");
        instance.write_stubs();
        instance
    }

    fn set_state(&self, state: &str) {
        fs::write(self.dir.join("state"), state).expect("write the state");
    }

    fn write_stubs(&self) {
        let d = self.dir.display();
        // IMDSv2: a token first, and the target lifecycle state only for a
        // request that carries it.
        stub(
            &self.dir,
            "curl",
            &format!(
                "case \"$*\" in\n\
                 *169.254.169.254/latest/api/token*) printf imds-token ;;\n\
                 *'X-aws-ec2-metadata-token: imds-token'*/meta-data/autoscaling/target-lifecycle-state)\n\
                   echo polled >> '{d}/imds.log'\n\
                   cat '{d}/state' ;;\n\
                 *) exit 22 ;;\n\
                 esac"
            ),
        );
        stub(
            &self.dir,
            "systemctl",
            &format!("printf '%s\\n' \"$*\" >> '{d}/systemctl.log'"),
        );
        stub(
            &self.dir,
            "nodeadm",
            &format!("printf '%s\\n' \"$*\" >> '{d}/join.log'"),
        );
        stub(
            &self.dir,
            "bootstrap.sh",
            &format!("printf '%s\\n' \"$*\" >> '{d}/join.log'"),
        );
        stub(&self.dir, "sleep", "exec /bin/sleep 0.01");
    }

    /// The user data's shell part with the instance's paths under the
    /// scratch directory.
    fn shell_part(&self, bootstrap: Bootstrap) -> String {
        let doc = render(&input(bootstrap, &self.dir)).expect("renders");
        let start = doc.find("#!/bin/bash").expect("a shell part");
        let end = doc[start..].find("\n--==").expect("end of the part") + start;
        self.local(&doc[start..end])
    }

    /// `text` with the instance's paths under the scratch directory.
    fn local(&self, text: &str) -> String {
        let d = self.dir.display();
        text.replace("/usr/local/bin/", &format!("{d}/"))
            .replace("/etc/systemd/system/", &format!("{d}/"))
            .replace("/var/lib/eksynth", &format!("{d}/var"))
            .replace("/etc/eks/bootstrap.sh", &format!("{d}/bin/bootstrap.sh"))
    }

    fn command(&self, line: &str) -> Command {
        let path = format!(
            "{}:{}",
            self.dir.join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut command = Command::new("bash");
        command
            .args(["-c", line])
            .env("PATH", path)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        command
    }

    /// The first boot: cloud-init runs the user data.
    fn run_user_data(&self, bootstrap: Bootstrap) {
        let file = self.dir.join("user-data.sh");
        fs::write(&file, self.shell_part(bootstrap)).expect("write the user data");
        let status = self
            .command(&format!("bash '{}'", file.display()))
            .status()
            .expect("bash runs");
        assert!(status.success(), "the user data succeeds");
    }

    /// The commands of the unit that joins, as systemd runs them at a boot:
    /// `ExecStartPre`, then the service's own command, then `ExecStartPost`;
    /// none once a `ConditionPathExists=!` path exists.
    fn unit(&self, bootstrap: Bootstrap) -> Unit {
        let (file, own) = match bootstrap {
            // The AMI's nodeadm-run.service runs `nodeadm init --skip config`
            // (awslabs/amazon-eks-ami, templates/al2023/runtime/rootfs/etc/
            // systemd/system/nodeadm-run.service); eksynth adds a drop-in.
            Bootstrap::Al2023 => (
                "nodeadm-run.service.d/90-eksynth-warm-pool.conf",
                Some("nodeadm init --skip config".to_string()),
            ),
            _ => ("eksynth-join.service", None),
        };
        let text = fs::read_to_string(self.dir.join(file)).expect("the unit");
        let value = |key: &str| -> Vec<String> {
            text.lines()
                .filter_map(|l| l.strip_prefix(&format!("{key}=")))
                .map(String::from)
                .collect()
        };
        let mut start = value("ExecStart");
        start.extend(own);
        Unit {
            pre: value("ExecStartPre"),
            start,
            post: value("ExecStartPost"),
            unless: value("ConditionPathExists")
                .iter()
                .filter_map(|c| c.strip_prefix('!'))
                .map(PathBuf::from)
                .collect(),
        }
    }

    /// Starts a boot's run of the unit, in a process group of its own (the
    /// boot's processes, which stopping or hibernating the instance ends or
    /// freezes): `ExecStartPre`, then the service's own command, then
    /// `ExecStartPost`, each only once the one before succeeded; nothing
    /// once a `ConditionPathExists=!` path exists.
    fn start_boot(&self, unit: &Unit) -> Child {
        let skip = unit.unless.iter().any(|p| p.exists());
        let chain = if skip {
            "true".to_string()
        } else {
            let lines: Vec<&String> = unit
                .pre
                .iter()
                .chain(&unit.start)
                .chain(&unit.post)
                .collect();
            assert!(lines.len() >= 2, "a wait, then a join");
            lines
                .iter()
                .map(|l| l.as_str())
                .collect::<Vec<_>>()
                .join(" && ")
        };
        self.command(&chain)
            .process_group(0)
            .spawn()
            .expect("bash runs")
    }

    /// A whole boot of an instance already in service.
    fn boot(&self, unit: &Unit) {
        let status = self.start_boot(unit).wait().expect("the boot ends");
        assert!(status.success(), "the unit succeeds");
    }

    fn log(&self, name: &str) -> Vec<String> {
        fs::read_to_string(self.dir.join(format!("{name}.log")))
            .unwrap_or_default()
            .lines()
            .map(String::from)
            .collect()
    }

    fn joins(&self) -> usize {
        self.log("join").len()
    }

    fn signals(&self) -> usize {
        self.log("systemctl")
            .iter()
            .filter(|l| *l == "start --no-block eksynth-signal.service")
            .count()
    }

    /// Waits until the instance has asked IMDS `polls` more times.
    fn await_polls(&self, polls: usize) {
        let from = self.log("imds").len();
        for _ in 0..500 {
            if self.log("imds").len() >= from + polls {
                return;
            }
            sleep(Duration::from_millis(10));
        }
        panic!("the instance stopped asking for its target lifecycle state");
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

struct Unit {
    pre: Vec<String>,
    start: Vec<String>,
    post: Vec<String>,
    unless: Vec<PathBuf>,
}

/// Sends `signal` to the process group of a boot.
fn group(boot: &Child, signal: &str) {
    let status = Command::new("kill")
        .args([signal, "--", &format!("-{}", boot.id())])
        .status()
        .expect("kill runs");
    assert!(status.success());
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

/// A self-managed group with a warm pool whose pre-bootstrap command
/// records that the instance prepared.
fn input(bootstrap: Bootstrap, dir: &Path) -> UserDataInput {
    UserDataInput {
        pre_bootstrap_commands: vec![format!("echo prepared >> '{}/prepared.log'", dir.display())],
        warm_pool: true,
        ..user_data::self_managed(bootstrap)
    }
}

/// The first boot of an instance launched into the pool: it prepares,
/// then waits for its state without joining or signalling.
fn first_boot_warmed(instance: &Instance, bootstrap: Bootstrap, state: &str) -> (Unit, Child) {
    instance.set_state(state);
    instance.run_user_data(bootstrap);
    assert_eq!(instance.log("prepared"), ["prepared"], "it prepares");
    let unit = instance.unit(bootstrap);
    let wait = instance.start_boot(&unit);
    instance.await_polls(1);
    sleep(Duration::from_millis(100));
    assert_eq!(instance.joins(), 0, "no join while warmed");
    assert_eq!(instance.signals(), 0, "no signal while warmed");
    // It is still asking.
    instance.await_polls(2);
    (unit, wait)
}

#[test]
fn a_stopped_warm_instance_joins_and_signals_once_when_started_in_service() {
    for bootstrap in [Bootstrap::Al2023, Bootstrap::Al2] {
        let instance = Instance::new(&format!("stopped-{bootstrap:?}"));
        let (unit, mut wait) = first_boot_warmed(&instance, bootstrap, "Warmed:Stopped");
        // Auto Scaling stops the instance: the boot's processes end.
        group(&wait, "-KILL");
        let _ = wait.wait();
        assert_eq!((instance.joins(), instance.signals()), (0, 0));

        // A scale-out starts it in service: the unit runs at this boot.
        instance.set_state("InService");
        instance.boot(&unit);
        assert_eq!(instance.joins(), 1, "{bootstrap:?} joins once in service");
        assert_eq!(instance.signals(), 1, "{bootstrap:?} signals once");
        // The preparation is not repeated.
        assert_eq!(instance.log("prepared"), ["prepared"]);

        // A later boot (a reboot, or reuse from the pool) never signals
        // again; on AL2023 nodeadm starts kubelet at each boot, on AL2
        // kubelet starts by itself once bootstrap.sh has enabled it.
        instance.boot(&unit);
        assert_eq!(instance.signals(), 1, "{bootstrap:?} signals only once");
        let joins = match bootstrap {
            Bootstrap::Al2023 => 2,
            _ => 1,
        };
        assert_eq!(instance.joins(), joins, "{bootstrap:?}");
    }
}

#[test]
fn a_hibernated_warm_instance_joins_and_signals_once_when_resumed_in_service() {
    for bootstrap in [Bootstrap::Al2023, Bootstrap::Al2] {
        let instance = Instance::new(&format!("hibernated-{bootstrap:?}"));
        let (_, mut wait) = first_boot_warmed(&instance, bootstrap, "Warmed:Hibernated");
        // Hibernation freezes the boot's processes with the rest of memory.
        group(&wait, "-STOP");
        instance.set_state("InService");
        sleep(Duration::from_millis(100));
        assert_eq!((instance.joins(), instance.signals()), (0, 0));
        // Resumed in service, the same boot goes on from the wait.
        group(&wait, "-CONT");
        let status = wait.wait().expect("the boot ends");
        assert!(
            status.success(),
            "{bootstrap:?}: the boot goes on in service"
        );
        assert_eq!(instance.joins(), 1, "{bootstrap:?} joins once");
        assert_eq!(instance.signals(), 1, "{bootstrap:?} signals once");
    }
}

#[test]
fn an_instance_launched_in_service_joins_and_signals_at_its_first_boot() {
    for bootstrap in [Bootstrap::Al2023, Bootstrap::Al2] {
        let instance = Instance::new(&format!("in-service-{bootstrap:?}"));
        instance.set_state("InService");
        instance.run_user_data(bootstrap);
        // The user data itself neither joins nor signals: the unit does,
        // once cloud-final is done.
        assert_eq!((instance.joins(), instance.signals()), (0, 0));
        let unit = instance.unit(bootstrap);
        instance.boot(&unit);
        assert_eq!((instance.joins(), instance.signals()), (1, 1));
    }
}
