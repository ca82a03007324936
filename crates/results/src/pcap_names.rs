//! File names of the pcap captures, `pcap/<name>.pcap`: a link's name percent-encoded, so that
//! every link gets its own file. ASCII letters, digits, `-` and `_` stand for themselves; every
//! other byte of the name's UTF-8 form (`>`, `:`, `.`, `/`, `%`, spaces, non-ASCII letters)
//! becomes `%XX`. The mapping is one-to-one (`%` itself is encoded), so names that differ only
//! in characters a file name cannot hold, or in non-ASCII characters, never share a file, and
//! a file name decodes back to its link's name (Python: `urllib.parse.unquote`).

/// The file name, without directory, of link `link`'s capture: e.g. `S1-%3EN1.pcap` for `S1->N1`.
pub fn pcap_file_name(link: &str) -> String {
    let mut name = String::with_capacity(link.len() + 5);
    for byte in link.bytes() {
        if byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_' {
            name.push(char::from(byte));
        } else {
            name.push_str(&format!("%{byte:02X}"));
        }
    }
    name.push_str(".pcap");
    name
}

#[cfg(test)]
mod tests {
    use super::pcap_file_name;

    #[test]
    fn names_differing_only_in_non_ascii_or_punctuation_get_their_own_files() {
        let links = [
            "a→b", "a←b", "a?b", "a-b", "a--b", "a->b", "a-.b", "a%3Eb", "é", "e\u{301}", "..",
            "a/b", "",
        ];
        let files: Vec<String> = links.iter().map(|l| pcap_file_name(l)).collect();
        let unique: std::collections::HashSet<&String> = files.iter().collect();
        assert_eq!(unique.len(), links.len(), "{files:?}");
        assert_eq!(pcap_file_name("S1->N1"), "S1-%3EN1.pcap");
        assert_eq!(pcap_file_name("a→b"), "a%E2%86%92b.pcap");
        for f in &files {
            let stem = f.strip_suffix(".pcap").unwrap();
            assert!(
                stem.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_%".contains(&b)),
                "{f}"
            );
        }
    }
}
