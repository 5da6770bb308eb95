//! The user data input of one self-managed group of cluster `staging` that
//! signals CloudFormation, which the tests that run rendered user data
//! start from and change only what they are about. Declared by the tests
//! that use it (`#[path = "common/user_data.rs"] mod user_data;`).

use eksynth::eks::userdata::{Bootstrap, Mode, Signal, SignalClient, UserDataInput};

pub fn self_managed(bootstrap: Bootstrap) -> UserDataInput {
    UserDataInput {
        bootstrap,
        mode: Mode::SelfManaged,
        cluster_name: "staging".into(),
        api_server_endpoint: "https://example.eks.amazonaws.com".into(),
        certificate_authority: "Q0E=".into(),
        service_ipv4_cidr: Some("10.100.0.0/16".into()),
        service_ipv6_cidr: None,
        dns_cluster_ip: "10.100.0.10".into(),
        cluster_dns: Vec::new(),
        labels: vec![],
        taints: vec![],
        max_pods: None,
        kubelet_config: vec![],
        node_config: None,
        pre_bootstrap_commands: vec![],
        efs_mounts: vec![],
        user_data_parts: vec![],
        bottlerocket_settings: Default::default(),
        block_pod_imds: false,
        signal: Some(Signal {
            stack_name: "staging-nodes".into(),
            logical_id: "Staging1NodeGroup".into(),
            region: "eu-west-1".into(),
            url_suffix: "amazonaws.com".into(),
            timeout_seconds: 900,
            client: SignalClient::Image,
            kubelet_unit: "kubelet.service".into(),
            post_bootstrap_commands: vec![],
        }),
        bootstrap_arguments: None,
        instance_store_raid0: false,
        warm_pool: false,
    }
}
