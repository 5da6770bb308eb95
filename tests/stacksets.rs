//! The StackSets example (`examples/stacksets/`): one template for every
//! account and region. Its cluster values are all parameters, the template
//! names no account ID, region or partition (so no stack instance gets
//! another account's or region's value), and the committed parameters file
//! lists exactly the template's parameters, as `synth --parameters-file`
//! writes it.

use std::path::Path;

use serde_json::Value;

fn example(file: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/stacksets")
        .join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

const DIRECTIONS: &[&str] = &[
    "north",
    "south",
    "east",
    "west",
    "central",
    "northeast",
    "southeast",
    "northwest",
    "southwest",
];

/// Whether `word` is an AWS region name: `eu-west-1`, `us-gov-west-1`,
/// `ap-southeast-5`, `us-isob-east-1`.
fn is_region(word: &str) -> bool {
    let parts: Vec<&str> = word.split('-').collect();
    let (geo, middle, number) = match parts.as_slice() {
        [geo, direction, number] => (*geo, vec![*direction], *number),
        [geo, kind, direction, number] => (*geo, vec![*kind, *direction], *number),
        _ => return false,
    };
    let direction = middle[middle.len() - 1];
    geo.len() == 2
        && geo.chars().all(|c| c.is_ascii_lowercase())
        && (middle.len() == 1 || ["gov", "iso", "isob", "isof", "isoe"].contains(&middle[0]))
        && DIRECTIONS.contains(&direction)
        && !number.is_empty()
        && number.chars().all(|c| c.is_ascii_digit())
}

/// The literals in `text` that tie a template to an account, a region or a
/// partition.
fn literals(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for word in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')) {
        if word.len() == 12 && word.chars().all(|c| c.is_ascii_digit()) {
            found.push(format!("account ID {word}"));
        }
        if is_region(word) {
            found.push(format!("region {word}"));
        }
    }
    // A partition: in an ARN, or as the service domain that differs by
    // partition (`${AWS::URLSuffix}` is the portable one).
    for literal in [
        "arn:aws:",
        "arn:aws-cn:",
        "arn:aws-us-gov:",
        "amazonaws.com",
    ] {
        if text.contains(literal) {
            found.push(format!("partition {literal}"));
        }
    }
    found
}

#[test]
fn the_literal_finder_finds_accounts_regions_and_partitions() {
    let found = literals(
        "Arn: arn:aws:iam::123456789012:role/x\nRegion: us-gov-west-1, eu-west-3\nHost: sts.cn-north-1.amazonaws.com.cn\nSize: 1234567890123\n",
    );
    assert_eq!(
        found,
        [
            "account ID 123456789012",
            "region us-gov-west-1",
            "region eu-west-3",
            "region cn-north-1",
            "partition arn:aws:",
            "partition amazonaws.com",
        ]
    );
    assert!(
        literals("${AWS::Region} ${AWS::AccountId} arn:${AWS::Partition}:iam m6i-large").is_empty()
    );
}

#[test]
fn the_stacksets_template_names_no_account_region_or_partition() {
    let template = example("stacksets.yaml");
    assert!(template.starts_with("AWSTemplateFormatVersion"));
    let found = literals(&template);
    assert!(
        found.is_empty(),
        "literals in examples/stacksets/stacksets.yaml: {found:?}"
    );
    // The blueprint is the source of them; it has none either.
    let found = literals(&example("blueprint.yaml"));
    assert!(found.is_empty(), "literals in the blueprint: {found:?}");
}

#[test]
fn every_cluster_value_of_the_stacksets_blueprint_is_a_parameter() {
    let blueprint: Value = serde_saphyr::from_str(&example("blueprint.yaml")).expect("YAML");
    let cluster = blueprint["cluster"].as_object().expect("cluster");
    // The Kubernetes version chooses the AMI and the authentication mode the
    // access resources: they are the same everywhere by design.
    for (field, value) in cluster {
        if ["kubernetesVersion", "authenticationMode"].contains(&field.as_str()) {
            continue;
        }
        assert!(
            value["parameter"].is_string(),
            "cluster.{field} is not a parameter: {value}"
        );
    }
    assert!(blueprint["defaults"]["subnets"]["parameter"].is_string());
}

#[test]
fn the_parameters_file_lists_every_template_parameter_in_the_stacksets_shape() {
    let text = example("stacksets.yaml");
    let template =
        eksynth::cfn::read::read(&eksynth::source::SourceFile::new("stacksets.yaml", &text))
            .unwrap_or_else(|e| panic!("the template does not read: {e:?}"));
    let declared: Vec<&str> = template.parameters.keys().map(String::as_str).collect();
    let file: Value = serde_json::from_str(&example("stacksets.parameters.json")).expect("JSON");
    let entries = file.as_array().expect("a list");
    let keys: Vec<&str> = entries
        .iter()
        .map(|entry| {
            let object = entry.as_object().expect("an object");
            let mut fields: Vec<&String> = object.keys().collect();
            fields.sort();
            assert_eq!(fields, ["ParameterKey", "ParameterValue"]);
            assert!(entry["ParameterValue"].is_string());
            entry["ParameterKey"].as_str().expect("key")
        })
        .collect();
    assert_eq!(keys, declared);
    for cluster_value in [
        "ClusterName",
        "ClusterEndpoint",
        "ClusterCertificateAuthority",
        "VpcId",
        "Subnets",
    ] {
        assert!(
            keys.contains(&cluster_value),
            "{cluster_value} is not a parameter"
        );
    }
}
