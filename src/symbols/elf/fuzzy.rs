//! "Did you mean" support: a bounded edit distance cheap enough to run over every symbol name
//! of a large binary when a lookup fails.

/// Largest distance worth suggesting for a query: typos, not different words.
pub(crate) fn max_distance(query: &str) -> usize {
    (query.chars().count() / 3).clamp(1, 3)
}

/// Optimal-string-alignment distance (Levenshtein plus adjacent transposition, so `mian` is
/// one edit from `main`), or `None` as soon as it must exceed `max`. Works on bytes: symbol
/// names are ASCII in practice, and a multi-byte slip only costs an extra edit.
pub(crate) fn bounded_distance(a: &str, b: &str, max: usize) -> Option<usize> {
    let a = a.as_bytes();
    let b = b.as_bytes();
    if a.len().abs_diff(b.len()) > max {
        return None;
    }
    if a == b {
        return Some(0);
    }
    let width = b.len() + 1;
    // Three rolling rows: transpositions look two rows back.
    let mut prev2 = vec![0usize; width];
    let mut prev: Vec<usize> = (0..width).collect();
    let mut cur = vec![0usize; width];
    for i in 1..=a.len() {
        cur[0] = i;
        let mut row_min = cur[0];
        for j in 1..width {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(prev2[j - 2] + 1);
            }
            cur[j] = d;
            row_min = row_min.min(d);
        }
        // Every later cell derives from this row, so it can only grow from here.
        if row_min > max {
            return None;
        }
        std::mem::swap(&mut prev2, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    let d = prev[b.len()];
    (d <= max).then_some(d)
}

/// Keeps the `k` best `(distance, name)` pairs, nearest first, ties by name, no duplicates.
pub(crate) fn best_k(mut scored: Vec<(usize, String)>, k: usize) -> Vec<(usize, String)> {
    // Group by name with the nearest first, so dedup keeps each name's best distance.
    scored.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)));
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.sort();
    scored.truncate(k);
    scored
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(bounded_distance("main", "main", 1), Some(0));
        assert_eq!(bounded_distance("mian", "main", 1), Some(1));
        assert_eq!(bounded_distance("prnitf", "printf", 2), Some(1));
        assert_eq!(bounded_distance("mai", "main", 1), Some(1));
        assert_eq!(bounded_distance("kitten", "sitting", 3), Some(3));
        assert_eq!(bounded_distance("kitten", "sitting", 2), None);
        assert_eq!(bounded_distance("a", "abcdef", 3), None);
        assert_eq!(bounded_distance("", "ab", 3), Some(2));
    }

    #[test]
    fn keeps_best_unique() {
        let v = vec![
            (2, "b".to_string()),
            (1, "a".to_string()),
            (1, "a".to_string()),
            (3, "c".into()),
        ];
        assert_eq!(
            best_k(v, 2),
            vec![(1, "a".to_string()), (2, "b".to_string())]
        );
    }
}
