//! The provider schemas: embedded and from a directory, intrinsic-aware,
//! with precise errors, and clean on the example templates.

use std::path::Path;

use eksynth::validate::schema::{SchemaError, SchemaSet};
use serde_json::{Value, json};

fn schemas() -> &'static SchemaSet {
    SchemaSet::embedded()
}

fn errors(resource_type: &str, properties: Value) -> Vec<SchemaError> {
    schemas()
        .validate(resource_type, &properties)
        .unwrap_or_else(|| panic!("no schema for {resource_type}"))
}

/// `(pointer, keyword)` of each error, for compact assertions.
fn places(errors: &[SchemaError]) -> Vec<(&str, &str)> {
    errors
        .iter()
        .map(|error| (error.pointer.as_str(), error.keyword.as_str()))
        .collect()
}

fn launch_template() -> Value {
    json!({
        "LaunchTemplateName": "nodes",
        "LaunchTemplateData": {
            "BlockDeviceMappings": [{
                "DeviceName": "/dev/xvda",
                "Ebs": {
                    "DeleteOnTermination": true,
                    "Encrypted": true,
                    "VolumeSize": 20,
                    "VolumeType": "gp3"
                }
            }],
            "IamInstanceProfile": { "Arn": { "Fn::GetAtt": ["Profile", "Arn"] } },
            "ImageId": { "Ref": "ImageId" },
            "InstanceType": "m6i.large",
            "MetadataOptions": {
                "HttpEndpoint": "enabled",
                "HttpTokens": "required",
                "HttpPutResponseHopLimit": 1
            },
            "SecurityGroupIds": [{ "Ref": "NodeSecurityGroup" }],
            "TagSpecifications": [{
                "ResourceType": "volume",
                "Tags": [{ "Key": "Name", "Value": "node" }]
            }],
            "UserData": { "Fn::Base64": { "Fn::Sub": "#!/bin/bash\necho ${AWS::Region}\n" } }
        }
    })
}

fn auto_scaling_group() -> Value {
    json!({
        "MinSize": "1",
        "MaxSize": "3",
        "LaunchTemplate": {
            "LaunchTemplateId": { "Ref": "LaunchTemplate" },
            "Version": { "Fn::GetAtt": ["LaunchTemplate", "LatestVersionNumber"] }
        },
        "VPCZoneIdentifier": ["subnet-1", "subnet-2"]
    })
}

#[test]
fn a_valid_launch_template_passes() {
    assert_eq!(
        errors("AWS::EC2::LaunchTemplate", launch_template()),
        vec![]
    );
}

#[test]
fn a_bad_enum_deep_inside_is_reported_at_its_own_pointer() {
    let mut template = launch_template();
    template["LaunchTemplateData"]["BlockDeviceMappings"][0]["Ebs"]["VolumeType"] = json!("gp9");
    let found = errors("AWS::EC2::LaunchTemplate", template);
    assert_eq!(
        places(&found),
        vec![(
            "/LaunchTemplateData/BlockDeviceMappings/0/Ebs/VolumeType",
            "enum"
        )]
    );
    let message = &found[0].message;
    assert!(message.starts_with("\"gp9\" is not one of "), "{message}");
    assert!(
        message.contains("\"gp3\"") && message.contains("\"standard\""),
        "{message}"
    );
}

#[test]
fn intrinsics_pass_in_string_integer_boolean_array_and_object_positions() {
    let mut template = launch_template();
    let data = &mut template["LaunchTemplateData"];
    data["InstanceType"] = json!({ "Ref": "InstanceType" });
    data["BlockDeviceMappings"][0]["Ebs"]["VolumeSize"] = json!({ "Ref": "VolumeSize" });
    data["BlockDeviceMappings"][0]["Ebs"]["Encrypted"] =
        json!({ "Fn::If": ["Encrypt", true, { "Ref": "AWS::NoValue" }] });
    data["SecurityGroupIds"] = json!({ "Ref": "SecurityGroupList" });
    data["MetadataOptions"] =
        json!({ "Fn::If": ["Imdsv2", { "HttpTokens": "required" }, { "Ref": "AWS::NoValue" }] });
    data["TagSpecifications"][0]["Tags"] = json!([
        { "Fn::If": ["Named", { "Key": "Name", "Value": "x" }, { "Ref": "AWS::NoValue" }] },
        { "Key": { "Fn::Sub": "${AWS::StackName}-key" }, "Value": { "Fn::ImportValue": "shared" } }
    ]);
    assert_eq!(errors("AWS::EC2::LaunchTemplate", template), vec![]);

    let mut group = auto_scaling_group();
    group["MaxSize"] = json!({ "Fn::FindInMap": ["Sizes", "Max", "Value"] });
    group["VPCZoneIdentifier"] = json!({ "Fn::Split": [",", { "Ref": "Subnets" }] });
    group["LaunchTemplate"]["Version"] =
        json!({ "Fn::GetAtt": ["LaunchTemplate", "LatestVersionNumber"] });
    assert_eq!(errors("AWS::AutoScaling::AutoScalingGroup", group), vec![]);

    // The whole of Properties may be conditional too.
    let conditional = json!({ "Fn::If": ["C", { "MinSize": "1", "MaxSize": "2" }, {}] });
    assert_eq!(
        errors("AWS::AutoScaling::AutoScalingGroup", conditional),
        vec![]
    );
}

#[test]
fn newer_intrinsics_pass_too() {
    let topic = json!({
        "DisplayName": { "Fn::GetStackOutput": { "StackName": "producer", "OutputName": "Name" } }
    });
    assert_eq!(errors("AWS::SNS::Topic", topic), vec![]);
}

#[test]
fn a_dynamic_reference_is_not_held_to_the_final_value_s_constraints() {
    // The password's pattern asks for three character classes; the
    // reference is replaced by the secret before CloudFormation checks it.
    let directory = json!({
        "Name": "corp.example.com",
        "Password": "{{resolve:secretsmanager:DirectoryAdmin:SecretString:password}}",
        "VpcSettings": { "SubnetIds": ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"], "VpcId": "vpc-0123abcd" }
    });
    assert_eq!(
        errors("AWS::DirectoryService::MicrosoftAD", directory.clone()),
        vec![]
    );
    let mut size = auto_scaling_group();
    size["MaxSize"] = json!("{{resolve:ssm:/nodes/max}}");
    assert_eq!(errors("AWS::AutoScaling::AutoScalingGroup", size), vec![]);
    // A plain string still is.
    let mut weak = directory;
    weak["Password"] = json!("password");
    assert_eq!(
        places(&errors("AWS::DirectoryService::MicrosoftAD", weak)),
        vec![("/Password", "pattern")]
    );
    // Braces alone are no reference.
    let mut group = auto_scaling_group();
    group["MaxSize"] = json!("{{resolve:}}");
    assert_eq!(
        places(&errors("AWS::AutoScaling::AutoScalingGroup", group)),
        vec![("/MaxSize", "pattern")]
    );
}

#[test]
fn an_object_with_two_intrinsic_keys_is_not_an_intrinsic() {
    let mut group = auto_scaling_group();
    group["MaxSize"] = json!({ "Ref": "A", "Fn::Sub": "b" });
    assert_eq!(
        places(&errors("AWS::AutoScaling::AutoScalingGroup", group)),
        vec![("/MaxSize", "type")]
    );
}

#[test]
fn a_wrong_type_fails_at_its_pointer() {
    let mut group = auto_scaling_group();
    group["MaxSize"] = json!(true);
    let found = errors("AWS::AutoScaling::AutoScalingGroup", group);
    assert_eq!(places(&found), vec![("/MaxSize", "type")]);
    assert_eq!(found[0].message, "true is not of type \"string\"");
}

#[test]
fn scalars_convert_the_way_cloudformation_converts_them() {
    // MaxSize is a string in the schema; FromPort an integer; Encrypted a boolean.
    let mut group = auto_scaling_group();
    group["MaxSize"] = json!(3);
    assert_eq!(errors("AWS::AutoScaling::AutoScalingGroup", group), vec![]);

    let ingress = |from_port: Value| json!({ "GroupId": "sg-0123abcd", "IpProtocol": "tcp", "CidrIp": "10.0.0.0/8", "FromPort": from_port, "ToPort": 443 });
    assert_eq!(
        errors("AWS::EC2::SecurityGroupIngress", ingress(json!("443"))),
        vec![]
    );
    let found = errors("AWS::EC2::SecurityGroupIngress", ingress(json!("https")));
    assert_eq!(places(&found), vec![("/FromPort", "type")]);
    assert_eq!(found[0].message, "\"https\" is not of type \"integer\"");

    let mut template = launch_template();
    template["LaunchTemplateData"]["BlockDeviceMappings"][0]["Ebs"]["Encrypted"] = json!("true");
    assert_eq!(errors("AWS::EC2::LaunchTemplate", template.clone()), vec![]);
    template["LaunchTemplateData"]["BlockDeviceMappings"][0]["Ebs"]["Encrypted"] = json!("yes");
    assert_eq!(
        places(&errors("AWS::EC2::LaunchTemplate", template)),
        vec![(
            "/LaunchTemplateData/BlockDeviceMappings/0/Ebs/Encrypted",
            "type"
        )]
    );
}

#[test]
fn an_unknown_property_is_reported_by_name_at_its_pointer() {
    let mut template = launch_template();
    template["LaunchTemplateData"]["MetadataOptions"]["HttpTokenz"] = json!("required");
    template["Foo"] = json!(1);
    let found = errors("AWS::EC2::LaunchTemplate", template);
    assert_eq!(
        places(&found),
        vec![
            ("/Foo", "additionalProperties"),
            (
                "/LaunchTemplateData/MetadataOptions/HttpTokenz",
                "additionalProperties"
            ),
        ]
    );
    assert_eq!(found[0].message, "unknown property \"Foo\"");
    assert_eq!(found[1].message, "unknown property \"HttpTokenz\"");
}

#[test]
fn a_missing_required_property_is_reported_at_its_object() {
    let found = errors(
        "AWS::EC2::SecurityGroup",
        json!({ "VpcId": "vpc-0123abcd" }),
    );
    assert_eq!(places(&found), vec![("", "required")]);
    assert_eq!(
        found[0].message,
        "missing required property \"GroupDescription\""
    );

    let found = errors(
        "AWS::EC2::LaunchTemplate",
        json!({ "LaunchTemplateData": { "TagSpecifications": [{ "ResourceType": "volume", "Tags": [{ "Key": "k" }] }] } }),
    );
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        found[0].pointer,
        "/LaunchTemplateData/TagSpecifications/0/Tags/0"
    );
    assert_eq!(found[0].message, "missing required property \"Value\"");
}

#[test]
fn a_dependency_names_the_property_that_needs_it() {
    let found = errors(
        "AWS::EC2::SecurityGroup",
        json!({ "GroupDescription": "d", "SecurityGroupEgress": [{ "IpProtocol": "-1", "CidrIp": "0.0.0.0/0" }] }),
    );
    assert_eq!(places(&found), vec![("", "required")]);
    assert_eq!(
        found[0].message,
        "missing property \"VpcId\", required when \"SecurityGroupEgress\" is set"
    );
}

#[test]
fn a_choice_between_required_properties_is_one_message() {
    let document = json!({ "Version": "2012-10-17", "Statement": [] });
    let found = errors(
        "AWS::IAM::Policy",
        json!({ "PolicyName": "p", "PolicyDocument": document }),
    );
    assert_eq!(places(&found), vec![("", "required")]);
    assert_eq!(
        found[0].message,
        "at least one of \"Users\", \"Groups\", \"Roles\" is required"
    );
    let with_role =
        json!({ "PolicyName": "p", "PolicyDocument": document, "Roles": [{ "Ref": "Role" }] });
    assert_eq!(errors("AWS::IAM::Policy", with_role), vec![]);
}

#[test]
fn limits_have_readable_messages() {
    let mut template = launch_template();
    template["VersionDescription"] = json!("x".repeat(300));
    let found = errors("AWS::EC2::LaunchTemplate", template);
    assert_eq!(places(&found), vec![("/VersionDescription", "maxLength")]);
    assert!(
        found[0].message.starts_with("\"xxxxx"),
        "{}",
        found[0].message
    );
    assert!(
        found[0]
            .message
            .ends_with("...\" is longer than 255 characters (it has 300)"),
        "{}",
        found[0].message
    );

    let role = json!({
        "AssumeRolePolicyDocument": { "Version": "2012-10-17", "Statement": [] },
        "MaxSessionDuration": 100,
        "RoleName": "bad name!"
    });
    let found = errors("AWS::IAM::Role", role);
    assert_eq!(
        places(&found),
        vec![("/MaxSessionDuration", "minimum"), ("/RoleName", "pattern")]
    );
    assert_eq!(found[0].message, "100 is less than the minimum of 3600");
    assert!(
        found[1]
            .message
            .starts_with("\"bad name!\" does not match the pattern \"^"),
        "{}",
        found[1].message
    );
}

#[test]
fn patterns_written_for_python_still_apply() {
    // LogGroupName's pattern ends in Python's `\Z`.
    assert_eq!(
        errors(
            "AWS::Logs::LogGroup",
            json!({ "LogGroupName": "/eks/demo/nodes" })
        ),
        vec![]
    );
    let found = errors("AWS::Logs::LogGroup", json!({ "LogGroupName": "bad name" }));
    assert_eq!(places(&found), vec![("/LogGroupName", "pattern")]);
}

#[test]
fn errors_are_sorted_by_pointer_then_message() {
    let found = errors(
        "AWS::AutoScaling::AutoScalingGroup",
        json!({
            "Zeta": 1,
            "MaxSize": false,
            "Alpha": 2,
            "MinSize": [],
            "LaunchTemplate": { "LaunchTemplateId": "lt-0123456789abcdef0", "Version": "1" },
        }),
    );
    let pointers: Vec<&str> = found.iter().map(|error| error.pointer.as_str()).collect();
    assert_eq!(pointers, vec!["/Alpha", "/MaxSize", "/MinSize", "/Zeta"]);
}

#[test]
fn attributes_come_from_read_only_properties() {
    let attributes = schemas().attributes("AWS::EC2::LaunchTemplate").unwrap();
    assert!(
        attributes.contains(&"LatestVersionNumber".to_string()),
        "{attributes:?}"
    );
    assert!(
        attributes.contains(&"DefaultVersionNumber".to_string()),
        "{attributes:?}"
    );
    let attributes = schemas().attributes("AWS::IAM::Role").unwrap();
    assert_eq!(attributes, vec!["Arn", "RoleId"]);
    // Nested read-only properties are dotted.
    let attributes = schemas().attributes("AWS::Lambda::Function").unwrap();
    assert!(
        attributes.contains(&"SnapStartResponse.ApplyOn".to_string()),
        "{attributes:?}"
    );
    assert!(attributes.contains(&"Arn".to_string()), "{attributes:?}");

    let read_only = schemas()
        .read_only_properties("AWS::Lambda::Function")
        .unwrap();
    assert_eq!(read_only, vec!["SnapStartResponse", "Arn"]);
    let create_only = schemas()
        .create_only_properties("AWS::EC2::LaunchTemplate")
        .unwrap();
    assert_eq!(create_only, vec!["LaunchTemplateName"]);
    // A type that lists none has none.
    assert_eq!(
        schemas().attributes("AWS::IAM::RolePolicy"),
        Some(&[] as &[String])
    );
}

#[test]
fn an_unknown_type_has_no_schema() {
    let set = schemas();
    assert!(!set.has("AWS::Nope::Nothing"));
    assert!(set.has("AWS::EKS::Nodegroup"));
    assert_eq!(set.validate("AWS::Nope::Nothing", &json!({})), None);
    assert_eq!(set.attributes("AWS::Nope::Nothing"), None);
    assert_eq!(set.read_only_properties("AWS::Nope::Nothing"), None);
    assert_eq!(set.create_only_properties("AWS::Nope::Nothing"), None);
    assert_eq!(set.check("AWS::Nope::Nothing"), None);
}

/// The types eksynth emits: their schemas must compile and accept nothing
/// wrong even when empty (see below); every other type is only required to
/// compile.
const EMITTED: &[&str] = &[
    "AWS::AutoScaling::AutoScalingGroup",
    "AWS::AutoScaling::LifecycleHook",
    "AWS::AutoScaling::ScheduledAction",
    "AWS::AutoScaling::WarmPool",
    "AWS::CloudFormation::CustomResource",
    "AWS::EC2::LaunchTemplate",
    "AWS::EC2::PlacementGroup",
    "AWS::EC2::SecurityGroup",
    "AWS::EC2::SecurityGroupEgress",
    "AWS::EC2::SecurityGroupIngress",
    "AWS::EC2::Volume",
    "AWS::EKS::AccessEntry",
    "AWS::EKS::Nodegroup",
    "AWS::IAM::InstanceProfile",
    "AWS::IAM::ManagedPolicy",
    "AWS::IAM::Policy",
    "AWS::IAM::Role",
    "AWS::IAM::RolePolicy",
    "AWS::Lambda::Function",
    "AWS::Lambda::Permission",
    "AWS::Logs::LogGroup",
    "AWS::SSM::Parameter",
];

/// `schemas/manifest.txt`, one `(type, archive member, bytes, sha256)` per line.
fn manifest() -> Vec<(String, String, usize, String)> {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/manifest.txt"))
            .unwrap();
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            assert_eq!(fields.len(), 5, "{line}");
            (
                fields[0].to_string(),
                fields[1].to_string(),
                fields[3].parse().unwrap(),
                fields[4].to_string(),
            )
        })
        .collect()
}

fn sha256(text: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

#[test]
fn every_embedded_schema_is_the_one_the_manifest_lists_byte_for_byte() {
    let manifest = manifest();
    let types: Vec<&str> = schemas().types().collect();
    let listed: Vec<&str> = manifest.iter().map(|(name, ..)| name.as_str()).collect();
    assert_eq!(types, listed);
    // cfn-lint's us-east-1 provider has about 1850 types.
    assert!(types.len() > 1800, "{}", types.len());
    for (resource_type, member, bytes, hash) in &manifest {
        assert_eq!(
            *member,
            resource_type.replace("::", "_").to_lowercase() + ".json"
        );
        let text = SchemaSet::embedded_text(resource_type)
            .unwrap_or_else(|| panic!("{resource_type} is not embedded"));
        assert_eq!(text.len(), *bytes, "{resource_type}");
        assert_eq!(sha256(&text), *hash, "{resource_type}");
        let document: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(document["typeName"], json!(resource_type));
    }
    for resource_type in EMITTED {
        assert!(schemas().has(resource_type), "{resource_type}");
    }
    assert_eq!(SchemaSet::embedded_text("AWS::Nope::Nothing"), None);
    // The types eksynth emits are stored as they are (compiling a blueprint
    // inflates nothing); every other one is deflated.
    let index =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/index.rs"))
            .unwrap();
    let stored: Vec<&str> = index
        .lines()
        .filter(|line| line.ends_with(", false),"))
        .filter_map(|line| line.split('"').nth(1))
        .collect();
    assert_eq!(stored, EMITTED);
}

#[test]
fn every_embedded_schema_compiles() {
    let set = schemas();
    let types: Vec<&str> = set.types().collect();
    // About 1850 schemas: compiled on every core, as a debug build is slow.
    let threads = std::thread::available_parallelism().map_or(2, usize::from);
    let mut failed: Vec<(&str, String)> = std::thread::scope(|scope| {
        let workers: Vec<_> = types
            .chunks(types.len().div_ceil(threads))
            .map(|chunk| {
                scope.spawn(move || {
                    chunk
                        .iter()
                        .filter_map(|resource_type| match set.check(resource_type) {
                            Some(Ok(())) => None,
                            other => Some((*resource_type, format!("{other:?}"))),
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|worker| worker.join().unwrap())
            .collect()
    });
    failed.sort();
    assert_eq!(failed, vec![]);
}

#[test]
fn the_emitted_types_accept_an_empty_object_or_ask_only_for_required_properties() {
    let set = schemas();
    for resource_type in EMITTED {
        // Nothing set: at most "required" errors, never a panic.
        let found = set.validate(resource_type, &json!({})).unwrap();
        assert!(
            found.iter().all(|error| error.keyword == "required"),
            "{resource_type}: {found:?}"
        );
        // Not even an object: one type error at the root.
        let found = set.validate(resource_type, &json!("text")).unwrap();
        assert_eq!(places(&found), vec![("", "type")], "{resource_type}");
    }
}

#[test]
fn types_never_vendored_before_are_validated() {
    let set = schemas();
    // A bad enum deep inside a bucket, at its own pointer.
    let bucket = json!({
        "BucketName": "logs",
        "VersioningConfiguration": { "Status": "Enabled" },
        "BucketEncryption": { "ServerSideEncryptionConfiguration": [
            { "ServerSideEncryptionByDefault": { "SSEAlgorithm": "aws:kms" } }
        ] }
    });
    assert_eq!(set.validate("AWS::S3::Bucket", &bucket), Some(vec![]));
    let mut wrong = bucket.clone();
    wrong["VersioningConfiguration"]["Status"] = json!("On");
    assert_eq!(
        places(&set.validate("AWS::S3::Bucket", &wrong).unwrap()),
        vec![("/VersioningConfiguration/Status", "enum")]
    );

    let queue =
        json!({ "QueueName": { "Fn::Sub": "${AWS::StackName}-jobs" }, "VisibilityTimeout": 60 });
    assert_eq!(set.validate("AWS::SQS::Queue", &queue), Some(vec![]));
    let mut wrong = queue.clone();
    wrong["Visibility"] = json!(60);
    assert_eq!(
        places(&set.validate("AWS::SQS::Queue", &wrong).unwrap()),
        vec![("/Visibility", "additionalProperties")]
    );
    assert!(
        set.attributes("AWS::SQS::Queue")
            .unwrap()
            .contains(&"Arn".to_string())
    );
}

#[test]
fn settable_properties_cloudformation_returns_are_attributes() {
    let set = schemas();
    let has = |resource_type: &str, attribute: &str| {
        set.attributes(resource_type)
            .unwrap()
            .iter()
            .any(|name| name == attribute)
    };
    // Types whose every property is returned, nested objects dotted.
    assert!(has("AWS::SQS::Queue", "QueueName"));
    assert!(has("AWS::SQS::Queue", "Arn"));
    assert!(has("AWS::EC2::Instance", "AvailabilityZone"));
    assert!(has("AWS::EKS::Nodegroup", "ClusterName"));
    assert!(has("AWS::SSM::Parameter", "Value"));
    assert!(has("AWS::EC2::SecurityGroup", "VpcId"));
    assert!(has("AWS::EC2::Instance", "CpuOptions.CoreCount"));
    assert!(!has("AWS::EC2::Instance", "CpuOptions"));
    assert!(!has("AWS::EC2::Instance", "NoSuchThing"));
    // Types with named ones.
    assert!(has("AWS::AppMesh::Mesh", "MeshName"));
    assert!(!has("AWS::AppMesh::Mesh", "Spec"));
    // Others: the read-only properties only.
    assert!(!has("AWS::IAM::Role", "RoleName"));
}

#[test]
fn from_dir_reads_a_directory_of_schemas() {
    // A directory laid out like cfn-lint's: schemas under content-hash
    // names in `resources/`, next to an index.
    let scratch =
        std::env::temp_dir().join(format!("eksynth-schema-dir-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(scratch.join("resources")).unwrap();
    for (index, resource_type) in ["AWS::EC2::LaunchTemplate", "AWS::IAM::Role"]
        .iter()
        .enumerate()
    {
        std::fs::write(
            scratch.join("resources").join(format!("{index:016x}.json")),
            SchemaSet::embedded_text(resource_type).unwrap(),
        )
        .unwrap();
    }
    std::fs::write(
        scratch.join("us-east-1.json"),
        "{\"AWS::IAM::Role\": \"1\"}",
    )
    .unwrap();
    let dir = scratch.join("resources");
    let set = SchemaSet::from_dir(&dir).unwrap();
    assert_eq!(
        set.types().collect::<Vec<_>>(),
        ["AWS::EC2::LaunchTemplate", "AWS::IAM::Role"]
    );
    assert!(!set.has("AWS::S3::Bucket"));
    let mut template = launch_template();
    template["LaunchTemplateData"]["BlockDeviceMappings"][0]["Ebs"]["VolumeType"] = json!("gp9");
    assert_eq!(
        set.validate("AWS::EC2::LaunchTemplate", &template),
        schemas().validate("AWS::EC2::LaunchTemplate", &template)
    );
    assert_eq!(
        set.attributes("AWS::IAM::Role"),
        schemas().attributes("AWS::IAM::Role")
    );

    // The parent folder holds no schema itself but a `resources/` folder.
    let parent = SchemaSet::from_dir(&scratch).unwrap();
    assert_eq!(parent.types().count(), 2);
    std::fs::remove_dir_all(&scratch).unwrap();
}

#[test]
fn from_dir_reports_what_it_cannot_use() {
    let scratch = std::env::temp_dir().join(format!("eksynth-schema-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    assert!(SchemaSet::from_dir(&scratch.join("missing")).is_err());
    assert!(
        SchemaSet::from_dir(&scratch).is_err(),
        "an empty directory has no schema"
    );

    // Any file name will do; files without a typeName are skipped.
    let custom = json!({
        "typeName": "Test::Thing::Widget",
        "properties": { "Size": { "type": "integer", "maximum": 3 }, "Id": { "type": "string" } },
        "readOnlyProperties": ["/properties/Id"],
        "additionalProperties": false
    });
    std::fs::write(scratch.join("widget.json"), custom.to_string()).unwrap();
    std::fs::write(
        scratch.join("index.json"),
        "{\"Test::Thing::Widget\": \"widget\"}",
    )
    .unwrap();
    let set = SchemaSet::from_dir(&scratch).unwrap();
    assert_eq!(set.types().collect::<Vec<_>>(), vec!["Test::Thing::Widget"]);
    let found = set
        .validate("Test::Thing::Widget", &json!({ "Size": 4 }))
        .unwrap();
    assert_eq!(places(&found), vec![("/Size", "maximum")]);
    assert_eq!(
        set.attributes("Test::Thing::Widget"),
        Some(&["Id".to_string()][..])
    );

    // A pattern no regex engine here reads is dropped, not fatal.
    let odd = json!({ "typeName": "Test::Thing::Odd", "properties": { "A": { "pattern": "(", "maxLength": 1 } } });
    std::fs::write(scratch.join("odd.json"), odd.to_string()).unwrap();
    let set = SchemaSet::from_dir(&scratch).unwrap();
    assert_eq!(set.check("Test::Thing::Odd"), Some(Ok(())));
    assert_eq!(
        places(
            &set.validate("Test::Thing::Odd", &json!({ "A": "xy" }))
                .unwrap()
        ),
        vec![("/A", "maxLength")]
    );

    // A broken schema is an error when used, not a panic nor a silent pass.
    let broken =
        json!({ "typeName": "Test::Thing::Broken", "properties": { "A": { "minLength": "one" } } });
    std::fs::write(scratch.join("broken.json"), broken.to_string()).unwrap();
    let set = SchemaSet::from_dir(&scratch).unwrap();
    assert!(matches!(set.check("Test::Thing::Broken"), Some(Err(_))));
    let found = set
        .validate("Test::Thing::Broken", &json!({ "A": "x" }))
        .unwrap();
    assert_eq!(places(&found), vec![("", "schema")]);

    // Two files for one type are ambiguous; a file that is not JSON is an error.
    std::fs::write(scratch.join("widget-copy.json"), custom.to_string()).unwrap();
    assert!(
        SchemaSet::from_dir(&scratch)
            .unwrap_err()
            .contains("Test::Thing::Widget")
    );
    std::fs::remove_file(scratch.join("widget-copy.json")).unwrap();
    std::fs::write(scratch.join("junk.json"), "{ not json").unwrap();
    assert!(
        SchemaSet::from_dir(&scratch)
            .unwrap_err()
            .contains("junk.json")
    );

    std::fs::remove_dir_all(&scratch).unwrap();
}

#[test]
fn from_dir_reads_no_schema_file_past_the_input_cap() {
    let dir = std::env::temp_dir().join(format!("eksynth-schema-cap-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // A valid schema, padded with white space to one byte past 16 MiB.
    let mut text = json!({ "typeName": "Test::Thing::Large" }).to_string();
    text.push_str(&" ".repeat((16 << 20) + 1 - text.len()));
    std::fs::write(dir.join("large.json"), text).unwrap();
    let error = SchemaSet::from_dir(&dir).unwrap_err();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        error.ends_with("large.json: it is larger than 16 MiB, the most eksynth reads"),
        "{error}"
    );
}

/// A set holding one hand-written schema, through `from_dir`.
fn custom_set(name: &str, schema: Value) -> SchemaSet {
    let dir = std::env::temp_dir().join(format!("eksynth-schema-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("schema.json"), schema.to_string()).unwrap();
    let set = SchemaSet::from_dir(&dir).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    set
}

#[test]
fn a_failed_alternative_reports_the_branch_that_fits_best() {
    let set = custom_set(
        "alternatives",
        json!({
            "typeName": "Test::Thing::Choice",
            "additionalProperties": false,
            "properties": {
                "Target": {
                    "oneOf": [
                        { "type": "string", "pattern": "^arn:" },
                        {
                            "type": "object",
                            "additionalProperties": false,
                            "properties": { "Kind": { "enum": ["queue", "topic"] }, "Name": { "type": "string" } }
                        }
                    ]
                },
                // A reference into a definition's property, which the
                // rewrite has moved under `else`.
                "Floor": { "$ref": "#/definitions/Range/properties/Min" },
                "Sizes": { "type": "array", "items": { "anyOf": [{ "type": "integer" }, { "$ref": "#/definitions/Range" }] } }
            },
            "definitions": {
                "Range": { "type": "object", "required": ["Min"], "properties": { "Min": { "type": "integer" } } }
            }
        }),
    );
    let validate = |properties: Value| set.validate("Test::Thing::Choice", &properties).unwrap();

    let found = validate(json!({ "Target": { "Kind": "bucket" } }));
    assert_eq!(places(&found), vec![("/Target/Kind", "enum")]);
    assert_eq!(
        found[0].message,
        "\"bucket\" is not one of \"queue\", \"topic\""
    );
    let found = validate(json!({ "Target": "nope" }));
    assert_eq!(places(&found), vec![("/Target", "pattern")]);
    let found = validate(json!({ "Sizes": [1, { "Min": "x" }, {}] }));
    assert_eq!(
        places(&found),
        vec![("/Sizes/1/Min", "type"), ("/Sizes/2", "required")]
    );
    let found = validate(json!({ "Floor": "low" }));
    assert_eq!(places(&found), vec![("/Floor", "type")]);
    // Intrinsics pass inside alternatives and through `$ref`s as well.
    let fine = json!({ "Floor": 2, "Target": { "Fn::Sub": "arn:${X}" }, "Sizes": [{ "Ref": "N" }, { "Min": { "Ref": "M" } }] });
    assert_eq!(validate(fine), vec![]);
}

#[test]
fn a_schema_compiles_once_and_gives_the_same_answer_every_time() {
    let mut template = launch_template();
    template["LaunchTemplateData"]["BlockDeviceMappings"][0]["Ebs"]["VolumeType"] = json!("gp9");
    let first = schemas().validate("AWS::EC2::LaunchTemplate", &template);
    let second = schemas().validate("AWS::EC2::LaunchTemplate", &template);
    assert_eq!(first, second);
    // And from many threads at once, before and after compiling.
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                scope.spawn(|| {
                    schemas().validate("AWS::EKS::Nodegroup", &json!({ "ClusterName": "c" }))
                })
            })
            .collect();
        let answers: Vec<_> = handles
            .into_iter()
            .map(|handle| handle.join().unwrap())
            .collect();
        assert!(answers.windows(2).all(|pair| pair[0] == pair[1]));
    });
}

#[test]
fn nonsense_input_never_panics() {
    let inputs = [
        json!(null),
        json!([]),
        json!(1.5),
        json!({ "LaunchTemplateData": [] }),
        json!({ "LaunchTemplateData": { "BlockDeviceMappings": { "Ref": "X", "Fn::If": [] } } }),
        json!({ "LaunchTemplateData": { "BlockDeviceMappings": [null, 1, "x", { "Ebs": [] }] } }),
        json!({ "": { "~/": [[[]]] } }),
    ];
    for resource_type in EMITTED {
        for input in &inputs {
            let _ = schemas().validate(resource_type, input);
        }
    }
}

#[test]
fn the_example_templates_validate_clean() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut checked = 0;
    let mut paths: Vec<_> = std::fs::read_dir(&examples)
        .unwrap()
        .flat_map(|entry| std::fs::read_dir(entry.unwrap().path()).unwrap())
        .map(|entry| entry.unwrap().path())
        .collect();
    paths.sort();
    for path in paths {
        // The committed templates, not the blueprints beside them.
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        if !text.starts_with("AWSTemplateFormatVersion") {
            continue;
        }
        let name = path.display().to_string();
        let template =
            eksynth::cfn::read::read(&eksynth::source::SourceFile::new(name.clone(), text))
                .unwrap_or_else(|diagnostics| panic!("{name}: {diagnostics:?}"));
        for (id, resource) in &template.resources {
            let properties =
                eksynth::cfn::json::expr(&eksynth::cfn::Expr::Map(resource.properties.clone()));
            let kind = if resource.kind.starts_with("Custom::") {
                "AWS::CloudFormation::CustomResource"
            } else {
                resource.kind.as_str()
            };
            let found = schemas()
                .validate(kind, &properties)
                .unwrap_or_else(|| panic!("{name}: {id}: no schema for {}", resource.kind));
            assert_eq!(found, vec![], "{name}: {id}");
            checked += 1;
            // And the check is not vacuous: a stray property is caught.
            if kind != "AWS::CloudFormation::CustomResource" {
                let mut stray = properties.clone();
                stray["Stray"] = json!("x");
                let found = schemas().validate(kind, &stray).unwrap();
                assert_eq!(
                    places(&found),
                    vec![("/Stray", "additionalProperties")],
                    "{name}: {id}"
                );
            }
        }
    }
    assert!(checked > 10, "only {checked} resources checked");
}

/// The group's and the launch template's schemas in a set of their own, so
/// that no other test compiles into it meanwhile; `name` names the test.
fn own_set(name: &str) -> SchemaSet {
    let dir = std::env::temp_dir().join(format!("eksynth-schema-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (file, kind) in [
        ("group.json", "AWS::AutoScaling::AutoScalingGroup"),
        ("template.json", "AWS::EC2::LaunchTemplate"),
    ] {
        std::fs::write(dir.join(file), SchemaSet::embedded_text(kind).unwrap()).unwrap();
    }
    let set = SchemaSet::from_dir(&dir).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    set
}

/// A schema, or each part of one, is compiled once: validating the same
/// values again, many times, compiles nothing more and finds the same.
#[test]
fn validating_again_compiles_nothing_new() {
    let set = own_set("compile-once");
    let values = [
        ("AWS::AutoScaling::AutoScalingGroup", auto_scaling_group()),
        ("AWS::EC2::LaunchTemplate", launch_template()),
    ];
    assert_eq!(set.compilations(), 0);
    for (kind, value) in &values {
        assert_eq!(set.validate(kind, value), Some(Vec::new()), "{kind}");
    }
    let compiled = set.compilations();
    assert!(compiled > 2, "only {compiled} compilations");
    for _ in 0..50 {
        for (kind, value) in &values {
            assert_eq!(set.validate(kind, value), Some(Vec::new()), "{kind}");
        }
    }
    assert_eq!(set.compilations(), compiled);
}

/// Threads that need one part of a schema at the same time wait for the
/// one compiling it: validating on eight threads at once compiles exactly
/// what validating on one does.
#[test]
fn threads_validating_at_once_compile_each_part_once() {
    let kind = "AWS::EC2::LaunchTemplate";
    let value = launch_template();
    let alone = own_set("one-thread");
    assert_eq!(alone.validate(kind, &value), Some(Vec::new()));
    // A few rounds, each on a fresh set, as threads meet only by chance.
    for round in 0..4 {
        let together = own_set(&format!("eight-threads-{round}"));
        let start = std::sync::Barrier::new(8);
        std::thread::scope(|scope| {
            for _ in 0..8 {
                scope.spawn(|| {
                    start.wait();
                    assert_eq!(together.validate(kind, &value), Some(Vec::new()));
                });
            }
        });
        assert_eq!(
            together.compilations(),
            alone.compilations(),
            "round {round}"
        );
    }
}

#[test]
fn an_id_of_the_wrong_shape_breaks_its_format() {
    let found = errors(
        "AWS::EC2::SecurityGroup",
        json!({ "GroupDescription": "nodes", "VpcId": "vpc-123456" }),
    );
    assert_eq!(places(&found), vec![("/VpcId", "format")]);
    assert_eq!(
        found[0].message,
        "\"vpc-123456\" is not a VPC ID (`vpc-` and 8 or 17 hexadecimal digits)"
    );
}
