use eksynth::validate::schema::SchemaSet;
use serde_json::json;
#[test]
fn timing() {
    let set = SchemaSet::from_dir(std::path::Path::new("schemas/resources")).unwrap();
    for t in set.types().collect::<Vec<_>>() {
        let s = std::time::Instant::now();
        set.check(t);
        println!("{t}: {:?}", s.elapsed());
    }
    let lt = json!({"LaunchTemplateData": {"InstanceType": "m5.large", "BlockDeviceMappings": "x", "MetadataOptions": {"HttpTokens": 5}}});
    println!("{:#?}", set.validate("AWS::EC2::LaunchTemplate", &lt));
    let asg = json!({"MinSize": "1", "MaxSize": "2", "InstanceMaintenancePolicy": {"MinHealthyPercentage": 90}, "MixedInstancesPolicy": {"LaunchTemplate": {"LaunchTemplateSpecification": {"Version": "1"}, "Overrides": [{"InstanceType": 5, "InstanceRequirements": {"VCpuCount": {"Min": -1}}}]}}});
    println!("{:#?}", set.validate("AWS::AutoScaling::AutoScalingGroup", &asg));
    let s = std::time::Instant::now();
    for _ in 0..1000 { set.validate("AWS::AutoScaling::AutoScalingGroup", &asg); }
    println!("1000 asg: {:?}", s.elapsed());
    let s = std::time::Instant::now();
    let t = std::fs::read_to_string(".venv-cfnlint/lib/python3.11/site-packages/cfnlint/data/schemas/resources/3fce7f8ac6338539.json").unwrap();
    let _ = t;
    let big = SchemaSet::from_dir(std::path::Path::new(".venv-cfnlint/lib/python3.11/site-packages/cfnlint/data/schemas")).unwrap();
    println!("cfn-lint dir: {} types in {:?}", big.types().count(), s.elapsed());
    let mut bad = vec![];
    let s = std::time::Instant::now();
    for t in big.types().collect::<Vec<_>>() { if let Some(Err(e)) = big.check(t) { bad.push((t.to_string(), e)); } }
    println!("compiled all in {:?}; failures {}: {:?}", s.elapsed(), bad.len(), &bad[..bad.len().min(10)]);
}
