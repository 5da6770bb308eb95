//! The blueprint an import writes, as a tree whose entries remember the
//! input key they come from, and its YAML text.
//!
//! Every entry may carry an origin (an index into the importer's list of
//! input keys). The text records, line by line, the origin of what it
//! holds, so that a diagnostic about a line of the written blueprint can be
//! traced back to the input key behind it, and that key's entries removed.

/// One value of the written blueprint.
#[derive(Clone, Debug, PartialEq)]
pub struct Out {
    pub value: OutValue,
    pub origin: Option<usize>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum OutValue {
    /// A string, quoted when written where YAML would read it otherwise.
    Str(String),
    /// A scalar written as it is: a number, a boolean, `null`, a tagged
    /// value.
    Raw(String),
    Map(Vec<(String, Out)>),
    Seq(Vec<Out>),
}

/// The written text, and the origin of each of its lines (1-indexed line
/// `n` is `origins[n - 1]`).
pub struct Emitted {
    pub text: String,
    pub origins: Vec<Option<usize>>,
}

impl Out {
    fn new(value: OutValue) -> Out {
        Out {
            value,
            origin: None,
        }
    }

    pub fn str(text: &str) -> Out {
        Out::new(OutValue::Str(text.to_string()))
    }

    pub fn int(n: i64) -> Out {
        Out::new(OutValue::Raw(n.to_string()))
    }

    pub fn bool(b: bool) -> Out {
        Out::new(OutValue::Raw(b.to_string()))
    }

    /// A scalar written as it is: a number as the input wrote it (`0.5`,
    /// `3`), `null`, a tagged value.
    pub fn raw(text: &str) -> Out {
        Out::new(OutValue::Raw(text.to_string()))
    }

    pub fn map() -> Out {
        Out::new(OutValue::Map(Vec::new()))
    }

    pub fn seq(items: Vec<Out>) -> Out {
        Out::new(OutValue::Seq(items))
    }

    pub fn strs<S: AsRef<str>>(items: &[S]) -> Out {
        Out::seq(items.iter().map(|s| Out::str(s.as_ref())).collect())
    }

    /// `{parameter: NAME}`.
    pub fn parameter(name: &str) -> Out {
        let mut map = Out::map();
        map.set("parameter", Out::str(name));
        map
    }

    pub fn from(mut self, origin: usize) -> Out {
        self.origin = Some(origin);
        self
    }

    /// Sets `key` in a mapping, replacing an entry of that key in place.
    pub fn set(&mut self, key: &str, value: Out) {
        if let OutValue::Map(entries) = &mut self.value {
            match entries.iter_mut().find(|(k, _)| k == key) {
                Some(entry) => entry.1 = value,
                None => entries.push((key.to_string(), value)),
            }
        }
    }

    /// The mapping under `key`, created (with `origin`) when missing. A
    /// scalar or list is replaced by a mapping first.
    pub fn entry(&mut self, key: &str, origin: Option<usize>) -> &mut Out {
        if !matches!(self.value, OutValue::Map(_)) {
            self.value = OutValue::Map(Vec::new());
        }
        if self.get(key).is_none() {
            let mut map = Out::map();
            map.origin = origin;
            self.set(key, map);
        }
        let OutValue::Map(entries) = &mut self.value else {
            unreachable!("made a mapping above")
        };
        let index = entries
            .iter()
            .position(|(k, _)| k == key)
            .unwrap_or_default();
        &mut entries[index].1
    }

    /// The string, when the value is one.
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            OutValue::Str(text) => Some(text),
            _ => None,
        }
    }

    pub fn get(&self, key: &str) -> Option<&Out> {
        match &self.value {
            OutValue::Map(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn is_empty(&self) -> bool {
        match &self.value {
            OutValue::Map(entries) => entries.is_empty(),
            OutValue::Seq(items) => items.is_empty(),
            OutValue::Str(_) | OutValue::Raw(_) => false,
        }
    }

    /// Removes every entry and item that comes from `origin`, and the
    /// mappings and lists left empty by that.
    pub fn remove_origin(&mut self, origin: usize) {
        let kept = |value: &mut Out| {
            if value.origin == Some(origin) {
                return false;
            }
            let had_children = !value.is_empty();
            value.remove_origin(origin);
            !(had_children && value.is_empty())
        };
        match &mut self.value {
            OutValue::Map(entries) => entries.retain_mut(|(_, value)| kept(value)),
            OutValue::Seq(items) => items.retain_mut(kept),
            OutValue::Str(_) | OutValue::Raw(_) => {}
        }
    }

    /// The blueprint as YAML, after `header` (comment lines).
    pub fn emit(&self, header: &[String]) -> Emitted {
        let mut lines: Vec<(String, Option<usize>)> = header
            .iter()
            .map(|line| (format!("# {line}").trim_end().to_string(), None))
            .collect();
        if let OutValue::Map(entries) = &self.value {
            emit_entries(entries, 0, self.origin, &mut lines);
        }
        let mut text = String::new();
        for (line, _) in &lines {
            text.push_str(line);
            text.push('\n');
        }
        Emitted {
            text,
            origins: lines.into_iter().map(|(_, origin)| origin).collect(),
        }
    }
}

fn emit_entries(
    entries: &[(String, Out)],
    indent: usize,
    inherited: Option<usize>,
    lines: &mut Vec<(String, Option<usize>)>,
) {
    let pad = " ".repeat(indent);
    for (key, value) in entries {
        let origin = value.origin.or(inherited);
        let key = scalar(key);
        match inline(value) {
            Some(text) => lines.push((format!("{pad}{key}: {text}"), origin)),
            None => {
                lines.push((format!("{pad}{key}:"), origin));
                emit_block(value, indent + 2, origin, lines);
            }
        }
    }
}

fn emit_block(
    value: &Out,
    indent: usize,
    inherited: Option<usize>,
    lines: &mut Vec<(String, Option<usize>)>,
) {
    match &value.value {
        OutValue::Map(entries) => emit_entries(entries, indent, inherited, lines),
        OutValue::Seq(items) => {
            // Items of a list sit at the indentation of their key.
            let indent = indent.saturating_sub(2);
            let pad = " ".repeat(indent);
            for item in items {
                let origin = item.origin.or(inherited);
                match (&item.value, inline(item)) {
                    (_, Some(text)) => lines.push((format!("{pad}- {text}"), origin)),
                    (OutValue::Map(entries), None) => {
                        let start = lines.len();
                        emit_entries(entries, indent + 2, origin, lines);
                        if let Some((first, _)) = lines.get_mut(start) {
                            first.replace_range(indent..indent + 2, "- ");
                        }
                    }
                    (_, None) => {
                        lines.push((format!("{pad}-"), origin));
                        emit_block(item, indent + 4, origin, lines);
                    }
                }
            }
        }
        OutValue::Str(_) | OutValue::Raw(_) => {
            if let Some(text) = inline(value) {
                lines.push((format!("{}{text}", " ".repeat(indent)), inherited));
            }
        }
    }
}

/// A value written on its key's line: scalars, empty collections, and
/// `{parameter: NAME}`.
fn inline(value: &Out) -> Option<String> {
    match &value.value {
        OutValue::Str(text) => Some(scalar(text)),
        OutValue::Raw(text) => Some(text.clone()),
        OutValue::Map(entries) if entries.is_empty() => Some("{}".into()),
        OutValue::Seq(items) if items.is_empty() => Some("[]".into()),
        OutValue::Map(entries) if entries.len() == 1 && entries[0].0 == "parameter" => {
            let OutValue::Str(name) = &entries[0].1.value else {
                return None;
            };
            Some(format!("{{parameter: {}}}", scalar(name)))
        }
        _ => None,
    }
}

/// A string as a YAML scalar: plain when every YAML reader takes it for
/// that string, double-quoted (JSON escapes, which YAML shares) otherwise.
pub fn scalar(text: &str) -> String {
    if is_plain(text) {
        text.to_string()
    } else {
        serde_json::to_string(text).unwrap_or_else(|_| format!("\"{text}\""))
    }
}

fn is_plain(text: &str) -> bool {
    let Some(first) = text.chars().next() else {
        return false;
    };
    let reserved = [
        "true", "false", "yes", "no", "on", "off", "y", "n", "null", "~",
    ];
    if reserved.contains(&text.to_ascii_lowercase().as_str()) {
        return false;
    }
    // Anything that starts like a number (or a version, `1.33`) is quoted.
    if first.is_ascii_digit() || first == '.' || first == '+' || first == '-' {
        return false;
    }
    text.chars()
        .all(|c| c.is_ascii_alphanumeric() || "_./-@=()$*, :".contains(c))
        // YAML indicators that cannot begin a plain scalar (`-` and `.`
        // are quoted above).
        && !text.starts_with(['*', '@', ',', ' '])
        && !text.ends_with([':', ' '])
        && !text.contains(": ")
        && !text.contains(" #")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ambiguous_strings_are_quoted() {
        assert_eq!(scalar("1.33"), "\"1.33\"");
        assert_eq!(scalar("yes"), "\"yes\"");
        assert_eq!(scalar("a: b"), "\"a: b\"");
        assert_eq!(scalar("line\nnext"), "\"line\\nnext\"");
        assert_eq!(scalar("m5.large"), "m5.large");
        assert_eq!(scalar("@team"), "\"@team\"");
        assert_eq!(scalar(",a"), "\",a\"");
    }

    #[test]
    fn lines_know_their_origin_and_removal_drops_empty_parents() {
        let mut root = Out::map();
        let mut group = Out::map();
        group.set("name", Out::str("a"));
        let mut iam = Out::map();
        iam.set("roleName", Out::str("r").from(7));
        group.set("iam", iam);
        root.set("nodeGroups", Out::seq(vec![group]));
        let emitted = root.emit(&[]);
        assert_eq!(
            emitted.text,
            "nodeGroups:\n- name: a\n  iam:\n    roleName: r\n"
        );
        assert_eq!(emitted.origins, vec![None, None, None, Some(7)]);
        root.remove_origin(7);
        assert_eq!(root.emit(&[]).text, "nodeGroups:\n- name: a\n");
    }
}
