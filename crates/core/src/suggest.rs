//! The name a misspelt one probably meant: the nearest of the names allowed, by edit distance
//! (insertions, deletions, substitutions and swaps of two neighbouring characters), when it is
//! near enough and nearer than any other. A scenario's errors about an unknown field, keyword,
//! node or link, the real-time driver's about an unknown protocol and the command line's about an
//! unknown experiment or benchmark id add it as "did you mean `rate`?".

/// The name among `names` that `word` most probably misspells, if one stands out: other than
/// `word`, at most one edit away (letter case aside) for a word of up to five characters, at
/// most a third of its length for a longer one, and strictly nearer than every other name (a
/// tie suggests nothing).
pub fn closest<'n>(word: &str, names: impl IntoIterator<Item = &'n str>) -> Option<&'n str> {
    let typed = word;
    let word: Vec<char> = word.to_lowercase().chars().collect();
    let limit = (word.len() / 3).max(1);
    let mut best: Option<(usize, &str)> = None;
    let mut tied = false;
    for name in names {
        let candidate: Vec<char> = name.to_lowercase().chars().collect();
        let d = distance(&word, &candidate);
        if name == typed || d > limit {
            continue;
        }
        match best {
            Some((b, _)) if d > b => {}
            Some((b, _)) if d == b => tied = true,
            _ => {
                best = Some((d, name));
                tied = false;
            }
        }
    }
    best.filter(|_| !tied).map(|(_, name)| name)
}

/// "did you mean `name`? " for the name `word` probably misspells among `names` (to lead the
/// list of what is allowed), or nothing.
pub fn did_you_mean<'n>(word: &str, names: impl IntoIterator<Item = &'n str>) -> String {
    closest(word, names).map_or_else(String::new, |name| format!("did you mean `{name}`? "))
}

/// The optimal string alignment distance between `a` and `b`.
fn distance(a: &[char], b: &[char]) -> usize {
    // rows[i][j]: the distance between a[..i] and b[..j]; three rows are enough
    let mut before = vec![0; b.len() + 1];
    let mut last: Vec<usize> = (0..=b.len()).collect();
    let mut row = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        row[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            row[j] = (last[j] + 1).min(row[j - 1] + 1).min(last[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                row[j] = row[j].min(before[j - 2] + 1);
            }
        }
        std::mem::swap(&mut before, &mut last);
        std::mem::swap(&mut last, &mut row);
    }
    last[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(a: &str, b: &str) -> usize {
        distance(
            &a.chars().collect::<Vec<_>>(),
            &b.chars().collect::<Vec<_>>(),
        )
    }

    #[test]
    fn distances_count_insertions_deletions_substitutions_and_swaps() {
        assert_eq!(d("rate", "rate"), 0);
        assert_eq!(d("rat", "rate"), 1);
        assert_eq!(d("rates", "rate"), 1);
        assert_eq!(d("rote", "rate"), 1);
        assert_eq!(d("rtae", "rate"), 1);
        assert_eq!(d("droptial", "droptail"), 1);
        assert_eq!(d("", "abc"), 3);
        assert_eq!(d("kitten", "sitting"), 3);
    }

    #[test]
    fn a_near_name_that_stands_out_is_suggested() {
        let fields = ["rate", "rates", "start", "stop", "interval"];
        assert_eq!(closest("rat", fields), Some("rate"));
        assert_eq!(closest("intervall", fields), Some("interval"));
        assert_eq!(closest("Rate", fields), Some("rate"));
        assert_eq!(closest("strat", fields), Some("start"));
        assert_eq!(did_you_mean("stpo", fields), "did you mean `stop`? ");
    }

    #[test]
    fn a_far_or_ambiguous_name_suggests_nothing() {
        let fields = ["rate", "rates", "start", "stop"];
        assert_eq!(closest("bandwidth", fields), None);
        assert_eq!(closest("ra", fields), None); // two edits from "rate": too far for its length
        assert_eq!(closest("RATES", ["rates", "Rates"]), None); // as near as each other
        assert_eq!(closest("ratez", fields), None); // one edit from both "rate" and "rates"
        assert_eq!(did_you_mean("bandwidth", fields), "");
    }
}
