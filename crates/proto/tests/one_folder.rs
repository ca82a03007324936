//! One protocol, one folder (issue 19): a protocol's own type names appear in no Rust file
//! outside its folder, its scenario reader file, the protocol list and tests, except in the
//! places listed in `KNOWN`, each with why. A new appearance fails this test; so does an
//! exception that no longer holds (remove it from the list).
//!
//! The scan: every public type, enum, alias or trait declared in a protocol's folder, less the
//! names something outside the folder declares too (`Control`, `Player`, ... are several
//! modules' own), looked for as whole identifiers in the code of every `crates/*/src` file that
//! holds no tests (`tests/`, `tests.rs`, `*_tests.rs`), up to its `#[cfg(test)] mod tests`
//! (unit tests sit at a file's end), comments left out (prose says "Transport" and "Phase").

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Each protocol's folder (or file) in `crates/proto/src`, and its scenario reader files in
/// `crates/scenario/src/protocols`.
const PROTOCOLS: &[(&str, &[&str])] = &[
    ("tcp", &["tcp.rs", "tcp_control.rs"]),
    ("cbr.rs", &["cbr.rs"]),
    ("tfrc", &["tfrc.rs", "tfrc_wireless.rs"]),
    ("multfrc", &["multfrc.rs"]),
    ("vtp", &["vtp.rs"]),
    ("rap", &["rap.rs"]),
    (
        "media_scaling",
        &["media_scaling.rs", "mmapp.rs", "mpegapp.rs"],
    ),
    ("surestream", &["surestream.rs"]),
    ("abr", &["abr.rs"]),
];

/// Where a protocol's names appear today outside the places allowed, and why.
const KNOWN: &[(&str, &str, &str)] = &[
    // Protocols built on others.
    (
        "tcp",
        "crates/proto/src/surestream/config.rs",
        "the streamer runs over TCP",
    ),
    (
        "tcp",
        "crates/proto/src/surestream/mod.rs",
        "the streamer runs over TCP",
    ),
    (
        "tcp",
        "crates/proto/src/surestream/tcp.rs",
        "the streamer runs over TCP",
    ),
    (
        "tcp",
        "crates/proto/src/tfrc/sender.rs",
        "TFRC keeps TCP's RTT estimator",
    ),
    (
        "tfrc",
        "crates/proto/src/multfrc/mod.rs",
        "MULTFRC is n TFRC connections",
    ),
    (
        "tfrc",
        "crates/proto/src/multfrc/receiver.rs",
        "MULTFRC is n TFRC connections",
    ),
    (
        "tfrc",
        "crates/proto/src/multfrc/sender.rs",
        "MULTFRC is n TFRC connections",
    ),
    (
        "media_scaling",
        "crates/proto/src/surestream/config.rs",
        "the streamer sends MediaData",
    ),
    (
        "media_scaling",
        "crates/proto/src/surestream/udp.rs",
        "the streamer sends MediaData",
    ),
    // The emulator's own flow kinds.
    (
        "cbr.rs",
        "crates/emu/src/flows/cbr.rs",
        "the emulator paces CBR itself",
    ),
    (
        "cbr.rs",
        "crates/emu/src/plan.rs",
        "the emulator's flow kinds",
    ),
    (
        "cbr.rs",
        "crates/emu/src/forward.rs",
        "a placeholder header",
    ),
    (
        "surestream",
        "crates/emu/src/flows/stream_tcp.rs",
        "the streamer over a kernel socket",
    ),
    (
        "surestream",
        "crates/emu/src/plan.rs",
        "the emulator's flow kinds",
    ),
    (
        "abr",
        "crates/emu/src/plan.rs",
        "ERICA links are refused by type",
    ),
    // ATM: the ERICA port is a queue discipline, ABR flows a transport.
    (
        "abr",
        "crates/net/src/queue/erica.rs",
        "the ERICA port reads ABR cells",
    ),
    (
        "abr",
        "crates/net/src/queue/mod.rs",
        "the ERICA port is a queue",
    ),
    (
        "abr",
        "crates/scenario/src/elements.rs",
        "ERICA's parameters are a queue's",
    ),
];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "tests") {
                rust_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs")
            && path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n != "tests.rs" && !n.ends_with("_tests.rs"))
        {
            out.push(path);
        }
    }
}

/// A file's code up to its unit tests module, without its comment lines.
fn code(path: &Path) -> String {
    let text = fs::read_to_string(path).expect("a readable source file");
    let end = text.find("#[cfg(test)]\nmod tests {").unwrap_or(text.len());
    text[..end]
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

/// The type names `text` declares: `(pub) struct|enum|type|trait NAME`, public ones only when
/// `public`.
fn declared(text: &str, public: bool) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let line = line.trim_start();
        let rest = if let Some(r) = line.strip_prefix("pub ") {
            r
        } else if public {
            continue;
        } else {
            line.split_once(") ").map_or(line, |(_, r)| r)
        };
        for kind in ["struct ", "enum ", "type ", "trait "] {
            if let Some(r) = rest.strip_prefix(kind)
                && let Some(name) = identifiers(r).next()
            {
                out.insert(name.to_string());
            }
        }
    }
    out
}

#[test]
fn a_protocols_names_stay_in_its_folder_its_reader_and_the_list() {
    let root = workspace();
    let proto = root.join("crates/proto/src");
    let mut files = Vec::new();
    for krate in fs::read_dir(root.join("crates")).unwrap().flatten() {
        rust_files(&krate.path().join("src"), &mut files);
    }
    files.sort();
    let texts: Vec<(String, String)> = files
        .iter()
        .map(|f| {
            let rel = f
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            (rel, code(f))
        })
        .collect();
    let mut found: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for &(folder, readers) in PROTOCOLS {
        let home = format!("crates/proto/src/{folder}");
        assert!(proto.join(folder).exists(), "{home} is gone");
        let inside = |rel: &str| rel == home || rel.starts_with(&format!("{home}/"));
        let mut names = BTreeSet::new();
        let mut elsewhere = BTreeSet::new();
        for (rel, text) in &texts {
            if inside(rel) {
                names.extend(declared(text, true));
            } else {
                elsewhere.extend(declared(text, false));
            }
        }
        let names: BTreeSet<String> = names.difference(&elsewhere).cloned().collect();
        assert!(!names.is_empty(), "{home} declares no public type");
        let allowed = |rel: &str| {
            inside(rel)
                || rel == "crates/proto/src/protocols.rs"
                || readers
                    .iter()
                    .any(|r| rel == format!("crates/scenario/src/protocols/{r}"))
        };
        for (rel, text) in &texts {
            if allowed(rel) {
                continue;
            }
            let hits: BTreeSet<String> = identifiers(text)
                .filter(|w| names.contains(*w))
                .map(str::to_string)
                .collect();
            if !hits.is_empty() {
                found.insert((folder.to_string(), rel.clone()), hits);
            }
        }
    }
    let known: BTreeSet<(String, String)> = KNOWN
        .iter()
        .map(|&(p, f, _)| (p.to_string(), f.to_string()))
        .collect();
    let new: Vec<String> = found
        .iter()
        .filter(|(k, _)| !known.contains(*k))
        .map(|((p, f), names)| format!("{p}'s {names:?} in {f}"))
        .collect();
    let gone: Vec<&(String, String)> = known.iter().filter(|k| !found.contains_key(*k)).collect();
    assert!(
        new.is_empty(),
        "protocol names outside their folder, reader and the list:\n{}",
        new.join("\n")
    );
    assert!(
        gone.is_empty(),
        "no longer there (remove from KNOWN): {gone:?}"
    );
}
