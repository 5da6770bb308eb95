//! The template's own structure, beyond references: a template without
//! resources (`E9013`), conditions that are never used (`W9005`), are not boolean functions (`E9006`) or refer to
//! each other in a cycle (`E2012`), export
//! names used twice (`E9007`), an output whose value is not a string
//! (`E9011`), a logical ID that names both a parameter and a resource
//! (`E9008`), and `${Name}` written in a plain string where only `Fn::Sub`
//! would fill it in (`E9010`).

use std::collections::HashSet;

use super::Finding;
use crate::cfn::{Expr, Pseudo, Template};

pub fn check(template: &Template, findings: &mut Vec<Finding>) {
    resources(template, findings);
    conditions(template, findings);
    condition_cycles(template, findings);
    exports(template, findings);
    output_values(template, findings);
    shared_names(template, findings);
    sub_needed(template, findings);
}

/// No resources, written or read: CloudFormation refuses a template
/// without a `Resources` section or with an empty one ("Template format
/// error: At least one Resources member must be defined").
fn resources(template: &Template, findings: &mut Vec<Finding>) {
    if template.resources.is_empty() {
        findings.push(
            Finding::new(
                "E9013",
                "Resources",
                "the template has no resources: CloudFormation needs at least one",
            )
            .help("declare a resource under `Resources`; a stack of nothing is refused"),
        );
    }
}

/// Every condition name `expr` uses: `Fn::If`'s and `{"Condition": name}`.
fn collect_conditions<'a>(expr: &'a Expr, used: &mut HashSet<&'a str>) {
    match expr {
        Expr::If { condition, .. } | Expr::Condition(condition) => {
            used.insert(condition);
        }
        // `Condition: Other` as a whole condition, read as a mapping.
        Expr::Map(entries) if entries.len() == 1 => {
            if let Some(Expr::String(name)) = entries.get("Condition") {
                used.insert(name);
            }
        }
        _ => {}
    }
    expr.for_each_child(|_, child| collect_conditions(child, used));
}

fn conditions(template: &Template, findings: &mut Vec<Finding>) {
    let mut used = HashSet::new();
    for resource in template.resources.values() {
        if let Some(condition) = &resource.condition {
            used.insert(condition.as_str());
        }
        for value in resource.properties.values().chain(
            [
                &resource.metadata,
                &resource.creation_policy,
                &resource.update_policy,
            ]
            .into_iter()
            .flatten(),
        ) {
            collect_conditions(value, &mut used);
        }
    }
    for output in template.outputs.values() {
        if let Some(condition) = &output.condition {
            used.insert(condition.as_str());
        }
        collect_conditions(&output.value, &mut used);
        if let Some(export) = &output.export {
            collect_conditions(export, &mut used);
        }
    }
    for (name, condition) in &template.conditions {
        let mut inner = HashSet::new();
        collect_conditions(condition, &mut inner);
        // A condition that only uses itself is still unused.
        inner.remove(name.as_str());
        used.extend(inner);
    }
    for (name, condition) in &template.conditions {
        let path = format!("Conditions/{name}");
        if !used.contains(name.as_str()) {
            findings.push(
                Finding::new(
                    "W9005",
                    path.clone(),
                    format!("condition `{name}` is not used"),
                )
                .help(
                    "remove it, or use it in a resource's `Condition`, an output's or a `Fn::If`",
                ),
            );
        }
        check_boolean(condition, &path, findings);
    }
}

/// A condition is a boolean function (`Fn::Equals`, `Fn::And`, `Fn::Or`,
/// `Fn::Not`) or another condition, and so is each argument of `Fn::And`,
/// `Fn::Or` and `Fn::Not`.
fn check_boolean(condition: &Expr, path: &str, findings: &mut Vec<Finding>) {
    let arguments: Vec<(String, &Expr)> = match condition {
        Expr::Equals(..) | Expr::Condition(_) | Expr::Bool(_) => return,
        Expr::And(items) => numbered("Fn::And", items.iter()),
        Expr::Or(items) => numbered("Fn::Or", items.iter()),
        Expr::Not(inner) => vec![("Fn::Not/0".to_string(), inner.as_ref())],
        // An intrinsic eksynth does not know, kept as its mapping, is not
        // judged; `Condition: Other` is a condition.
        Expr::Map(entries)
            if condition.is_opaque_intrinsic()
                || entries.len() == 1
                    && matches!(entries.get("Condition"), Some(Expr::String(_))) =>
        {
            return;
        }
        _ => Vec::new(),
    };
    if arguments.is_empty() && !matches!(condition, Expr::And(_) | Expr::Or(_)) {
        findings.push(
            Finding::new(
                "E9006",
                path,
                format!(
                    "a condition must be `Fn::Equals`, `Fn::And`, `Fn::Or`, `Fn::Not` or another condition, found {}",
                    what(condition)
                ),
            )
            .help("compare values with `Fn::Equals`, e.g. `!Equals [!Ref Environment, prod]`"),
        );
        return;
    }
    for (segment, argument) in arguments {
        check_boolean(argument, &format!("{path}/{segment}"), findings);
    }
}

/// Conditions that refer to each other in a cycle: CloudFormation cannot
/// evaluate any condition on one. Each strongly connected set of conditions
/// is one finding, at the reference that leads from its first condition (in
/// template order) to the next one on a shortest cycle, which it names.
fn condition_cycles(template: &Template, findings: &mut Vec<Finding>) {
    let names: Vec<&str> = template.conditions.keys().map(String::as_str).collect();
    // For each condition, the conditions it names, with where it names them.
    let edges: Vec<Vec<(usize, String)>> = template
        .conditions
        .iter()
        .map(|(name, condition)| {
            let mut out = Vec::new();
            super::walk(
                condition,
                &mut format!("Conditions/{name}"),
                &mut |expr, path| {
                    let target = match expr {
                        Expr::Condition(target) => Some(target.as_str()),
                        Expr::Map(entries) if entries.len() == 1 => {
                            match entries.get("Condition") {
                                Some(Expr::String(target)) => Some(target.as_str()),
                                _ => None,
                            }
                        }
                        _ => None,
                    };
                    if let Some(index) = target.and_then(|t| template.conditions.get_index_of(t)) {
                        out.push((index, path.to_string()));
                    }
                },
            );
            out
        })
        .collect();
    for members in strongly_connected(&edges) {
        let Some(&start) = members.iter().min() else {
            continue;
        };
        let looped = members.len() > 1 || edges[start].iter().any(|(to, _)| *to == start);
        if !looped {
            continue;
        }
        let cycle = shortest_cycle(&edges, &members, start);
        let next = cycle.get(1).copied().unwrap_or(start);
        let path = edges[start].iter().find(|(to, _)| *to == next).map_or_else(
            || format!("Conditions/{}", names[start]),
            |(_, path)| path.clone(),
        );
        let message = if cycle.len() == 1 {
            format!("condition `{}` refers to itself", names[start])
        } else {
            format!(
                "conditions refer to each other in a cycle: {}",
                cycle_text(&names, &cycle)
            )
        };
        findings.push(
            Finding::new("E2012", path, message)
                .help("CloudFormation cannot evaluate a condition that depends on itself; break the cycle at one of its `Condition` references"),
        );
    }
}

/// The cycle as `A → B → A`; a long one with its middle left out.
fn cycle_text(names: &[&str], cycle: &[usize]) -> String {
    const SHOWN: usize = 8;
    let name = |i: &usize| format!("`{}`", names[*i]);
    let mut parts: Vec<String> = if cycle.len() > SHOWN {
        let mut parts: Vec<String> = cycle[..SHOWN - 2].iter().map(name).collect();
        parts.push("…".to_string());
        parts.extend(cycle[cycle.len() - 1..].iter().map(name));
        parts
    } else {
        cycle.iter().map(name).collect()
    };
    parts.push(name(&cycle[0]));
    let mut text = parts.join(" → ");
    if cycle.len() > SHOWN {
        text.push_str(&format!(" ({} conditions)", cycle.len()));
    }
    text
}

/// The strongly connected sets of a graph (Tarjan's algorithm), iterative
/// so that a chain of thousands of conditions cannot overflow the stack.
fn strongly_connected(edges: &[Vec<(usize, String)>]) -> Vec<Vec<usize>> {
    const UNSEEN: usize = usize::MAX;
    let count = edges.len();
    let (mut order, mut low) = (vec![UNSEEN; count], vec![0; count]);
    let mut on_stack = vec![false; count];
    let (mut stack, mut sets, mut next) = (Vec::new(), Vec::new(), 0);
    for root in 0..count {
        if order[root] != UNSEEN {
            continue;
        }
        // Each frame: a node and the index of its next edge to follow.
        let mut frames = vec![(root, 0)];
        order[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(frame) = frames.last_mut() {
            let (node, edge) = *frame;
            if let Some((to, _)) = edges[node].get(edge) {
                frame.1 += 1;
                let to = *to;
                if order[to] == UNSEEN {
                    order[to] = next;
                    low[to] = next;
                    next += 1;
                    stack.push(to);
                    on_stack[to] = true;
                    frames.push((to, 0));
                } else if on_stack[to] {
                    low[node] = low[node].min(order[to]);
                }
                continue;
            }
            frames.pop();
            if let Some(&(parent, _)) = frames.last() {
                low[parent] = low[parent].min(low[node]);
            }
            if low[node] == order[node] {
                let mut set = Vec::new();
                while let Some(member) = stack.pop() {
                    on_stack[member] = false;
                    set.push(member);
                    if member == node {
                        break;
                    }
                }
                sets.push(set);
            }
        }
    }
    sets
}

/// A shortest cycle from `start` back to it through `members`, as the
/// conditions on it from `start` (breadth-first, so iterative too).
fn shortest_cycle(edges: &[Vec<(usize, String)>], members: &[usize], start: usize) -> Vec<usize> {
    let mut parent: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        for (to, _) in &edges[node] {
            if *to == start {
                let mut cycle = vec![node];
                let mut at = node;
                while let Some(&up) = parent.get(&at) {
                    cycle.push(up);
                    at = up;
                }
                cycle.reverse();
                return cycle;
            }
            if members.contains(to) && !parent.contains_key(to) {
                parent.insert(*to, node);
                queue.push_back(*to);
            }
        }
    }
    vec![start]
}

fn numbered<'a>(name: &str, items: impl Iterator<Item = &'a Expr>) -> Vec<(String, &'a Expr)> {
    items
        .enumerate()
        .map(|(i, item)| (format!("{name}/{i}"), item))
        .collect()
}

/// What a value is, intrinsics by name, for messages.
fn what(value: &Expr) -> String {
    match value.function_name() {
        Some(name)
            if !matches!(
                value,
                Expr::Condition(_) | Expr::Equals(..) | Expr::And(_) | Expr::Or(_) | Expr::Not(_)
            ) =>
        {
            format!("`{name}`")
        }
        _ => super::attributes::describe(value).to_string(),
    }
}

/// Export names are unique in a region's account: two outputs of one
/// template that export the same name fail the stack.
fn exports(template: &Template, findings: &mut Vec<Finding>) {
    let mut seen: Vec<(&Expr, &str)> = Vec::new();
    for (name, output) in &template.outputs {
        let Some(export) = &output.export else {
            continue;
        };
        // Outputs under conditions may never exist together.
        if output.condition.is_some() {
            continue;
        }
        match seen.iter().find(|(other, _)| *other == export) {
            Some((_, first)) => findings.push(
                Finding::new(
                    "E9007",
                    format!("Outputs/{name}/Export/Name"),
                    format!("output `{name}` exports the same name as output `{first}`"),
                )
                .help("each export name must be unique; give one of them another name"),
            ),
            None => seen.push((export, name)),
        }
    }
}

/// An output's value is a string: CloudFormation refuses a template whose
/// output is a list or a mapping, written as one or made by a function that
/// gives one (`Fn::Split`, `Fn::GetAZs`, `Fn::Cidr`, `Ref` of a list
/// parameter). `Fn::If` is judged by its branches; what else a function
/// gives (an attribute's type) is not known here, and passes.
fn output_values(template: &Template, findings: &mut Vec<Finding>) {
    for (name, output) in &template.outputs {
        let mut found = Vec::new();
        not_strings(
            template,
            &output.value,
            format!("Outputs/{name}/Value"),
            &mut found,
        );
        for (path, what) in found {
            findings.push(
                Finding::new(
                    "E9011",
                    path,
                    format!("output `{name}` has {what} for a value, where outputs take a string"),
                )
                .help(
                    "join a list into one string with `Fn::Join`, or output each item on its own",
                ),
            );
        }
    }
}

/// Where `value` is not a string (what each gives instead), `Fn::If`
/// branches followed.
fn not_strings(
    template: &Template,
    value: &Expr,
    path: String,
    found: &mut Vec<(String, &'static str)>,
) {
    let what = match value {
        Expr::If {
            then, otherwise, ..
        } => {
            not_strings(template, then, format!("{path}/Fn::If/1"), found);
            not_strings(template, otherwise, format!("{path}/Fn::If/2"), found);
            return;
        }
        Expr::List(_) => "a list",
        // A function eksynth does not read (`Fn::GetStackOutput`) gives
        // what it gives.
        Expr::Map(_) if value.is_opaque_intrinsic() => return,
        Expr::Map(_) => "a mapping",
        Expr::Split { .. } => "the list `Fn::Split` gives",
        Expr::GetAZs(_) => "the list `Fn::GetAZs` gives",
        Expr::Cidr { .. } => "the list `Fn::Cidr` gives",
        Expr::Ref(name)
            if template.parameters.get(name).is_some_and(|parameter| {
                parameter.kind.contains("List<") || parameter.kind.contains("CommaDelimitedList")
            }) =>
        {
            "the list a `List` parameter gives"
        }
        _ => return,
    };
    found.push((path, what));
}

/// Parameters and resources share one namespace of logical IDs.
fn shared_names(template: &Template, findings: &mut Vec<Finding>) {
    for id in template.resources.keys() {
        if template.parameters.contains_key(id) {
            findings.push(
                Finding::new(
                    "E9008",
                    format!("Resources/{id}"),
                    format!("`{id}` names both a parameter and a resource"),
                )
                .help("logical IDs are unique across parameters and resources; rename one of them"),
            );
        }
    }
}

/// `${Name}` in a plain string: CloudFormation passes it on as written,
/// unless the string is a `Fn::Sub`. Reported only when `Name` is
/// something `Fn::Sub` would fill in (a parameter, a resource, a pseudo
/// parameter or a resource's attribute), since `${...}` is common in
/// scripts and IAM policy variables.
fn sub_needed(template: &Template, findings: &mut Vec<Finding>) {
    let resolves = |name: &str| {
        let name = name.trim();
        if template.parameters.contains_key(name)
            || template.resources.contains_key(name)
            || Pseudo::from_name(name).is_some()
        {
            return true;
        }
        name.split_once('.')
            .is_some_and(|(resource, _)| template.resources.contains_key(resource))
    };
    let mut visit = |expr: &Expr, path: &str| {
        let Expr::String(text) = expr else {
            return;
        };
        if let Some(variable) = variables(text).into_iter().find(|v| resolves(v)) {
            findings.push(
                Finding::new(
                    "E9010",
                    path,
                    format!("`${{{variable}}}` is in a plain string, so it is not filled in"),
                )
                .help(
                    "make the string a `Fn::Sub` (`!Sub`), or write `${!...}` for a literal `${`",
                ),
            );
        }
    };
    for (id, resource) in &template.resources {
        // A state machine fills its `DefinitionSubstitutions` in itself.
        if resource.kind == "AWS::StepFunctions::StateMachine"
            && resource.properties.contains_key("DefinitionSubstitutions")
        {
            continue;
        }
        for (key, value) in &resource.properties {
            // A nested template's body is a template of its own.
            if key == "TemplateBody" {
                continue;
            }
            super::walk(
                value,
                &mut format!("Resources/{id}/Properties/{key}"),
                &mut visit,
            );
        }
    }
    for (name, output) in &template.outputs {
        super::walk(
            &output.value,
            &mut format!("Outputs/{name}/Value"),
            &mut visit,
        );
    }
}

/// The names inside `${...}` of a plain string, `${!Literal}` left out.
fn variables(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            break;
        };
        let name = &after[..end];
        if !name.starts_with('!')
            && !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | ':' | '.'))
        {
            found.push(name);
        }
        rest = &after[end + 1..];
    }
    found
}
