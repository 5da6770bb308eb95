//! "Did you mean": the closest known name to a misspelt one.

/// The candidate closest to `word`, when it is close enough to be a likely typo.
pub fn closest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let lower = word.to_ascii_lowercase();
    candidates
        .iter()
        .map(|c| (edit_distance(&lower, &c.to_ascii_lowercase()), *c))
        // A third of the name may be wrong: enough for typos and swapped
        // letters, not for unrelated words.
        .filter(|(distance, candidate)| *distance <= (candidate.chars().count() / 3).max(1))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// Names written as code and separated by commas: `` `a`, `b`, `c` ``.
pub fn listed(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The help for a name that is not one of `names`: "did you mean" the
/// closest, or else every name after `intro` ("the node groups are").
pub fn did_you_mean_or_list(word: &str, names: &[&str], intro: &str) -> String {
    match closest(word, names) {
        Some(best) => format!("did you mean `{best}`?"),
        None => format!("{intro}: {}", listed(names)),
    }
}

/// Edit distance over characters where swapping two neighbours counts as
/// one edit, as a typist makes it (optimal string alignment): `bacth` is one
/// edit from `batch`, not two.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // Three rows: two back (for swaps), one back, and the current one.
    let mut before: Vec<usize> = Vec::new();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for i in 0..a.len() {
        let mut current = vec![i + 1; b.len() + 1];
        for j in 0..b.len() {
            let substitution = previous[j] + usize::from(a[i] != b[j]);
            let mut best = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
            if i > 0 && j > 0 && a[i] == b[j - 1] && a[i - 1] == b[j] {
                best = best.min(before[j - 1] + 1);
            }
            current[j + 1] = best;
        }
        before = std::mem::replace(&mut previous, current);
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_close_typo_gets_a_suggestion_and_a_distant_word_none() {
        let known = ["instanceType", "instanceTypes", "minSize", "maxSize"];
        assert_eq!(closest("instanceTyp", &known), Some("instanceType"));
        assert_eq!(closest("minsize", &known), Some("minSize"));
        assert_eq!(closest("colour", &known), None);
        // A swap of two letters is one typo.
        assert_eq!(closest("bacth", &["web", "batch"]), Some("batch"));
        assert_eq!(closest("mniSize", &known), Some("minSize"));
    }

    #[test]
    fn distances_count_insertions_deletions_substitutions_and_swaps() {
        assert_eq!(edit_distance("", ""), 0);
        assert_eq!(edit_distance("abc", ""), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("ab", "ba"), 1);
        assert_eq!(edit_distance("abcd", "badc"), 2);
        assert_eq!(edit_distance("same", "same"), 0);
    }
}
