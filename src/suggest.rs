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

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        previous = current;
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
    }
}
