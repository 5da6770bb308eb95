//! A unified diff of two texts, line by line, as `diff -u` prints it: what
//! `eksynth check` shows for a stale template.

use std::collections::HashMap;

/// Lines of context around each change in a [`unified_diff`].
const CONTEXT: usize = 3;

/// Above this many differing lines (after the common prefix and suffix), the
/// diff stops looking for the shortest edit and replaces the whole middle,
/// which bounds time and memory on unrelated files.
const MAX_EDIT_DISTANCE: usize = 2048;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Equal,
    Delete,
    Insert,
}

/// A unified diff from `old` to `new`, in the format of `diff -u` and `git
/// diff`: `--- {old_label}` and `+++ {new_label}` headers, then hunks with 3
/// lines of context (hunks closer than that merge). A count of 1 is omitted
/// from hunk headers (`@@ -3 +3 @@`), and a last line without a newline is
/// followed by `\ No newline at end of file`. Returns an empty string when
/// the texts are equal.
pub fn unified_diff(old: &str, new: &str, old_label: &str, new_label: &str) -> String {
    if old == new {
        return String::new();
    }
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    let ops = diff_lines(&old_lines, &new_lines);

    let mut out = format!("--- {old_label}\n+++ {new_label}\n");
    // Position in each file before each op.
    let mut positions = Vec::with_capacity(ops.len() + 1);
    let (mut o, mut n) = (0, 0);
    for op in &ops {
        positions.push((o, n));
        match op {
            Op::Equal => (o, n) = (o + 1, n + 1),
            Op::Delete => o += 1,
            Op::Insert => n += 1,
        }
    }
    positions.push((o, n));

    let changes: Vec<usize> = (0..ops.len()).filter(|&i| ops[i] != Op::Equal).collect();
    let mut group_start = 0;
    while group_start < changes.len() {
        // Extend the hunk while the next change is within 2 × context.
        let mut group_end = group_start;
        while group_end + 1 < changes.len()
            && changes[group_end + 1] - changes[group_end] - 1 <= 2 * CONTEXT
        {
            group_end += 1;
        }
        let first = changes[group_start].saturating_sub(CONTEXT);
        let last = (changes[group_end] + 1 + CONTEXT).min(ops.len());
        let (old_start, new_start) = positions[first];
        let (old_end, new_end) = positions[last];
        out.push_str(&format!(
            "@@ -{} +{} @@\n",
            hunk_range(old_start, old_end - old_start),
            hunk_range(new_start, new_end - new_start)
        ));
        for i in first..last {
            let (o, n) = positions[i];
            let (mark, line) = match ops[i] {
                Op::Equal => (' ', old_lines[o]),
                Op::Delete => ('-', old_lines[o]),
                Op::Insert => ('+', new_lines[n]),
            };
            out.push(mark);
            out.push_str(line);
            if !line.ends_with('\n') {
                out.push_str("\n\\ No newline at end of file\n");
            }
        }
        group_start = group_end + 1;
    }
    out
}

/// `start,count` of a hunk header (1-based); an empty range names the line
/// before it, and a count of 1 is omitted.
fn hunk_range(start: usize, count: usize) -> String {
    match count {
        0 => format!("{start},0"),
        1 => format!("{}", start + 1),
        _ => format!("{},{count}", start + 1),
    }
}

/// The edit script from `old` to `new`: the common prefix and suffix, and a
/// shortest edit (Myers) in between. Within each run of changes, deletions
/// come before insertions.
fn diff_lines(old: &[&str], new: &[&str]) -> Vec<Op> {
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let old_middle = &old[prefix..old.len() - suffix];
    let new_middle = &new[prefix..new.len() - suffix];

    // Compare small integers rather than strings.
    let mut ids: HashMap<&str, u32> = HashMap::new();
    let a = intern(&mut ids, old_middle);
    let b = intern(&mut ids, new_middle);

    let middle = myers(&a, &b, MAX_EDIT_DISTANCE).unwrap_or_else(|| {
        let mut ops = vec![Op::Delete; a.len()];
        ops.extend(std::iter::repeat_n(Op::Insert, b.len()));
        ops
    });

    let mut ops = vec![Op::Equal; prefix];
    ops.extend(middle);
    ops.extend(std::iter::repeat_n(Op::Equal, suffix));
    deletions_first(&mut ops);
    ops
}

/// Numbers lines so that equal lines get equal numbers.
fn intern<'a>(ids: &mut HashMap<&'a str, u32>, lines: &[&'a str]) -> Vec<u32> {
    lines
        .iter()
        .map(|&line| {
            let next = ids.len() as u32;
            *ids.entry(line).or_insert(next)
        })
        .collect()
}

/// Reorders each run of changes as its deletions, then its insertions: the
/// same edit, in the order `diff` prints it.
fn deletions_first(ops: &mut [Op]) {
    let mut i = 0;
    while i < ops.len() {
        if ops[i] == Op::Equal {
            i += 1;
            continue;
        }
        let start = i;
        while i < ops.len() && ops[i] != Op::Equal {
            i += 1;
        }
        let deletions = ops[start..i].iter().filter(|&&op| op == Op::Delete).count();
        ops[start..start + deletions].fill(Op::Delete);
        ops[start + deletions..i].fill(Op::Insert);
    }
}

/// Myers' O((N+M)D) shortest edit script, or `None` when it needs more than
/// `max_d` edits. Keeps the frontier of every step (O(D²) memory) to walk
/// the path back.
fn myers(a: &[u32], b: &[u32], max_d: usize) -> Option<Vec<Op>> {
    let (n, m) = (a.len() as isize, b.len() as isize);
    let max = (n + m) as usize;
    let offset = max as isize + 1;
    // v[k + offset]: the furthest x on diagonal k (k = x - y).
    let mut v = vec![0isize; 2 * max + 3];
    // trace[d][k + d]: v for k in -d..=d at the start of step d.
    let mut trace: Vec<Vec<isize>> = Vec::new();
    for d in 0..=max.min(max_d) as isize {
        trace.push(v[(offset - d) as usize..=(offset + d) as usize].to_vec());
        for k in (-d..=d).step_by(2) {
            let at = |k: isize| v[(k + offset) as usize];
            let mut x = if k == -d || (k != d && at(k - 1) < at(k + 1)) {
                at(k + 1)
            } else {
                at(k - 1) + 1
            };
            let mut y = x - k;
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            v[(k + offset) as usize] = x;
            if x >= n && y >= m {
                return Some(backtrack(&trace, n, m));
            }
        }
    }
    None
}

fn backtrack(trace: &[Vec<isize>], n: isize, m: isize) -> Vec<Op> {
    let mut ops = Vec::new();
    let (mut x, mut y) = (n, m);
    for (d, v) in trace.iter().enumerate().rev() {
        let d = d as isize;
        if d == 0 {
            // Step 0 is a snake from (0, 0).
            ops.extend(std::iter::repeat_n(Op::Equal, x as usize));
            break;
        }
        let at = |k: isize| v[(k + d) as usize];
        let k = x - y;
        let prev_k = if k == -d || (k != d && at(k - 1) < at(k + 1)) {
            k + 1
        } else {
            k - 1
        };
        let prev_x = at(prev_k);
        let prev_y = prev_x - prev_k;
        while x > prev_x && y > prev_y {
            ops.push(Op::Equal);
            x -= 1;
            y -= 1;
        }
        ops.push(if x == prev_x { Op::Insert } else { Op::Delete });
        (x, y) = (prev_x, prev_y);
    }
    ops.reverse();
    ops
}
