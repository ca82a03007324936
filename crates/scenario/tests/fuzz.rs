//! Random mutations of the shipped scenarios (proptest): characters deleted, inserted or
//! repeated, lines dropped or swapped, values replaced with extreme or malformed ones, keys added
//! with values at and past their limits. For each mutant, `load` either accepts it or rejects it
//! with the file, a line and (past TOML syntax) the field set; it never panics. An accepted one
//! is run, cut to at most 1 s of simulated time and to a budget of events the estimate allows:
//! it is refused by the memory check before it starts, or it completes with no more events than
//! estimated. Never a panic, a hang or an abort.
//!
//! The default run tries `FAIRSTREAM_FUZZ_CASES` mutants (256 if unset) from a fixed seed; the
//! nightly form, `cargo test -p fairstream-scenario --test fuzz -- --ignored`, tries at least
//! 10⁴ from a new seed each time. `FAIRSTREAM_FUZZ_SEED` repeats a seed a run printed.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;

use fairstream_core::{Duration, Instant};
use fairstream_scenario::{MemoryLimit, load};
use fairstream_sim::{Estimate, Simulator};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

/// The file name every mutant is loaded as.
const FILE: &str = "fuzz.toml";

/// Most events a mutant's run may be estimated at before its duration is cut further.
const EVENT_BUDGET: f64 = 200_000.0;

/// Memory a mutant's run may use.
const MEMORY: u64 = 512 << 20;

/// Values that replace a quoted string: extremes, malformed quantities, odd characters.
const STRINGS: &[&str] = &[
    "\"0\"",
    "\"\"",
    "\"1e30Mbps\"",
    "\"1e-3bps\"",
    "\"0bps\"",
    "\"10000Gbps\"",
    "\"1ns\"",
    "\"0s\"",
    "\"1e9s\"",
    "\"1e10s\"",
    "\"18446744073s\"",
    "\"-5ms\"",
    "\"1h\"",
    "\"1 day\"",
    "\"1e30B\"",
    "\"65536B\"",
    "\"29B\"",
    "\"1B\"",
    "\"100%\"",
    "\"150%\"",
    "\"NaN\"",
    "\"inf\"",
    "\"1e308s\"",
    "\"4294967296 packets\"",
    "\"0 packets\"",
    "\"1ms\"",
    "\"\\u001b[31m\"",
    "\"left0\"",
    "\"right0\"",
    "\"N1->N2\"",
    "\"{i}\"",
    "\"tcp\"",
    "\"cbr\"",
    "\"vtp\"",
    "\"rap\"",
    "\"red\"",
    "\"fq\"",
    "\"tbf\"",
];

/// Values that replace a number.
const NUMBERS: &[&str] = &[
    "0",
    "-1",
    "1",
    "2",
    "1.5",
    "1e30",
    "-1e30",
    "99999999999999999999",
    "9223372036854775807",
    "4294967296",
    "1000001",
    "100001",
    "nan",
    "inf",
    "true",
    "[]",
    "{}",
];

/// Lines added at a random place: keys at and past their limits, tables, junk.
const LINES: &[&str] = &[
    "count = 1000",
    "count = 1000001",
    "hosts = 100001",
    "hosts = 0",
    "routers = 10000",
    "packets = true",
    "metrics = true",
    "interval = \"1ns\"",
    "interval = \"1us\"",
    "duration = \"1e9s\"",
    "window = 1073741824",
    "initial_window = 1048576",
    "max_cwnd = 1",
    "min_rto = \"1ns\"",
    "initial_rto = \"1ns\"",
    "tick = \"1ns\"",
    "overhead = \"1s\"",
    "first_rate = \"10000Gbps\"",
    "initial_rate = \"10000Gbps\"",
    "rate = \"10000Gbps\"",
    "packet_size = \"29B\"",
    "limit = \"1e9s\"",
    "seed = -1",
    "start = { uniform = [\"1s\", \"0s\"] }",
    "stop = \"0s\"",
    "[record]",
    "[engine]",
    "perturb_delays = 1000",
    "[[flow]]",
    "[[topology.link]]",
    "= 1",
    "x = ",
    "[",
    "\"",
];

/// Characters inserted at a random place.
const CHARS: &[char] = &[
    '"', '\'', '=', '[', ']', '{', '}', ',', '.', '\n', '#', '0', '9', 'e', '-', '\\', 'é',
    '\u{1b}', '\u{0}', ' ',
];

/// One change to a scenario's text; positions and choices are fractions of what is there.
#[derive(Clone, Debug)]
enum Mutation {
    /// Delete up to `len` characters at `at`.
    Delete { at: f64, len: usize },
    /// Insert a character of [`CHARS`].
    Insert { at: f64, which: usize },
    /// Drop a line.
    DropLine { at: f64 },
    /// Swap two lines.
    SwapLines { a: f64, b: f64 },
    /// Repeat a line.
    RepeatLine { at: f64 },
    /// Replace a quoted string with one of [`STRINGS`].
    String { at: f64, which: usize },
    /// Replace a bare number with one of [`NUMBERS`].
    Number { at: f64, which: usize },
    /// Insert a line of [`LINES`] before a line.
    Line { at: f64, which: usize },
    /// Scale the number of a quoted quantity (`"35ms"`, `"11Mbps"`) by one of [`FACTORS`],
    /// keeping its unit: extremes of the right kind, most of them valid.
    Scale { at: f64, which: usize },
}

/// Factors a quantity is scaled by.
const FACTORS: &[f64] = &[0.0, 1e-12, 1e-6, 1e-3, 0.5, 2.0, 10.0, 1e3, 1e6, 1e9, 1e12];

fn mutation() -> impl Strategy<Value = Mutation> {
    let at = 0.0..1.0f64;
    prop_oneof![
        1 => (at.clone(), 1..12usize).prop_map(|(at, len)| Mutation::Delete { at, len }),
        1 => (at.clone(), 0..CHARS.len()).prop_map(|(at, which)| Mutation::Insert { at, which }),
        1 => at.clone().prop_map(|at| Mutation::DropLine { at }),
        1 => (at.clone(), at.clone()).prop_map(|(a, b)| Mutation::SwapLines { a, b }),
        1 => at.clone().prop_map(|at| Mutation::RepeatLine { at }),
        3 => (at.clone(), 0..STRINGS.len()).prop_map(|(at, which)| Mutation::String { at, which }),
        3 => (at.clone(), 0..NUMBERS.len()).prop_map(|(at, which)| Mutation::Number { at, which }),
        3 => (at.clone(), 0..LINES.len()).prop_map(|(at, which)| Mutation::Line { at, which }),
        6 => (at, 0..FACTORS.len()).prop_map(|(at, which)| Mutation::Scale { at, which }),
    ]
}

/// The item at fraction `at` of `n` items.
fn pick(at: f64, n: usize) -> usize {
    ((at * n as f64) as usize).min(n.saturating_sub(1))
}

/// A byte range `[start, end)` of a text.
type Span = (usize, usize);

/// Byte ranges of the quoted strings (`"…"` without escapes) and of the bare numbers of `text`.
fn tokens(text: &str) -> (Vec<Span>, Vec<Span>) {
    let (mut strings, mut numbers) = (Vec::new(), Vec::new());
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'#' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'"' => {
                let start = i;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' && bytes[i] != b'\n' {
                    i += 1;
                }
                strings.push((start, (i + 1).min(bytes.len())));
            }
            b'0'..=b'9' if i == 0 || matches!(bytes[i - 1], b' ' | b'=' | b'[' | b',') => {
                let start = i;
                while i < bytes.len()
                    && (bytes[i].is_ascii_alphanumeric() || b"._+-".contains(&bytes[i]))
                {
                    i += 1;
                }
                numbers.push((start, i));
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    (strings, numbers)
}

/// `text` with `m` applied.
fn apply(text: &str, m: &Mutation) -> String {
    let boundary = |at: f64| {
        let mut i = pick(at, text.len() + 1);
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let splice = |(a, b): (usize, usize), with: &str| format!("{}{with}{}", &text[..a], &text[b..]);
    match *m {
        Mutation::Delete { at, len } => {
            let a = boundary(at);
            let b = text[a..]
                .char_indices()
                .nth(len)
                .map_or(text.len(), |(i, _)| a + i);
            splice((a, b), "")
        }
        Mutation::Insert { at, which } => {
            let a = boundary(at);
            splice((a, a), &CHARS[which].to_string())
        }
        Mutation::DropLine { at } if !lines.is_empty() => {
            let k = pick(at, lines.len());
            lines
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != k)
                .map(|(_, l)| *l)
                .collect()
        }
        Mutation::SwapLines { a, b } if !lines.is_empty() => {
            let mut lines = lines;
            let (a, b) = (pick(a, lines.len()), pick(b, lines.len()));
            lines.swap(a, b);
            lines.concat()
        }
        Mutation::RepeatLine { at } if !lines.is_empty() => {
            let k = pick(at, lines.len());
            let mut lines = lines;
            lines.insert(k, lines[k]);
            lines.concat()
        }
        Mutation::String { at, which } => {
            let (strings, _) = tokens(text);
            if strings.is_empty() {
                return text.to_string();
            }
            splice(strings[pick(at, strings.len())], STRINGS[which])
        }
        Mutation::Number { at, which } => {
            let (_, numbers) = tokens(text);
            if numbers.is_empty() {
                return text.to_string();
            }
            splice(numbers[pick(at, numbers.len())], NUMBERS[which])
        }
        Mutation::Line { at, which } => {
            let k = pick(at, lines.len() + 1);
            let mut out: Vec<String> = lines.iter().map(|l| (*l).to_string()).collect();
            out.insert(k, format!("{}\n", LINES[which]));
            out.concat()
        }
        Mutation::Scale { at, which } => {
            let (strings, _) = tokens(text);
            let quantities: Vec<(usize, usize, f64, &str)> = strings
                .iter()
                .filter_map(|&(a, b)| {
                    let inner = text.get(a + 1..b.saturating_sub(1))?;
                    let split = inner.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
                    let n: f64 = inner[..split].parse().ok()?;
                    Some((a, b, n, &inner[split..]))
                })
                .collect();
            if quantities.is_empty() {
                return text.to_string();
            }
            let (a, b, n, unit) = quantities[pick(at, quantities.len())];
            splice((a, b), &format!("\"{}{unit}\"", n * FACTORS[which]))
        }
        _ => text.to_string(),
    }
}

/// The shipped scenarios' texts.
fn corpus() -> Vec<String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../python/fairstream/scenarios");
    let mut files = Vec::new();
    for dir in ["bench", "papers"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                files.push(path);
            }
        }
    }
    files.sort();
    assert!(files.len() > 20);
    files
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect()
}

/// What became of a mutant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    /// `load` rejected it.
    Rejected,
    /// Its run was refused by the memory check.
    Refused,
    /// It ran to its (cut) end.
    Ran,
}

/// What became of one mutant.
fn check(text: &str) -> Result<Outcome, TestCaseError> {
    let loaded = catch_unwind(AssertUnwindSafe(|| load(text, FILE, None)));
    let scenario = match loaded {
        Err(_) => return Err(TestCaseError::fail("load panicked")),
        Ok(Err(e)) => {
            prop_assert_eq!(e.file.as_str(), FILE);
            prop_assert!(e.line >= 1 && e.column >= 1, "{}", e);
            prop_assert!(
                !e.field.is_empty() || e.message.starts_with("invalid TOML"),
                "an error past TOML syntax names its field: {}",
                e
            );
            prop_assert!(!e.message.is_empty(), "{}", e);
            return Ok(Outcome::Rejected);
        }
        Ok(Ok(s)) => s,
    };
    // The check a run makes before it starts: passes, or refuses at a field.
    if let Err(e) = scenario.check_memory(&MemoryLimit::given(MEMORY, "the fuzz limit")) {
        prop_assert!(
            e.file == FILE && e.line >= 1 && !e.field.is_empty(),
            "{}",
            e
        );
        prop_assert!(e.message.contains("the fuzz limit"), "{}", e);
    }
    // Cut the run to 1 s, then to the event budget by its estimate.
    let mut net = scenario.network;
    net.duration = net.duration.min(Duration::from_secs(1));
    let mut estimate = Estimate::of(&net);
    if estimate.events > EVENT_BUDGET {
        let keep = EVENT_BUDGET / estimate.events;
        net.duration =
            Duration::from_nanos(((net.duration.as_nanos() as f64 * keep) as u64).max(1));
        estimate = Estimate::of(&net);
    }
    if estimate.total_bytes() > MEMORY as f64 {
        return Ok(Outcome::Refused); // refused before it starts, as above
    }
    let events = catch_unwind(AssertUnwindSafe(move || {
        let Ok(mut sim) = Simulator::new(net) else {
            return None; // a route the reader accepted but the engine refuses: checked below
        };
        let end = sim.end().as_nanos();
        for k in 1..=20 {
            sim.run_until(Instant::from_nanos(end / 20 * k));
            if sim.events() as f64 > estimate.events {
                return Some(sim.events());
            }
        }
        Some(sim.run().events)
    }));
    match events {
        Err(_) => Err(TestCaseError::fail("the run panicked")),
        Ok(None) => Err(TestCaseError::fail(
            "the engine refused what the reader accepted",
        )),
        Ok(Some(n)) => {
            prop_assert!(
                n as f64 <= estimate.events,
                "{} events, estimated {}: {:?}",
                n,
                estimate.events,
                estimate
            );
            Ok(Outcome::Ran)
        }
    }
}

/// Tries `cases` mutants (1 to 3 mutations of one shipped scenario each), drawn from `seed`.
fn fuzz(cases: u32, seed: u64) {
    let corpus = corpus();
    println!("fuzzing {cases} mutants from seed {seed} (FAIRSTREAM_FUZZ_SEED={seed} repeats them)");
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &bytes);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let strategy = (0..corpus.len(), prop::collection::vec(mutation(), 1..4));
    let seen = std::cell::RefCell::new(Vec::new());
    // Silence the default panic message while cases run: a panic is caught and reported as a
    // failing case, with its mutant.
    std::panic::set_hook(Box::new(|_| {}));
    let result = runner.run(&strategy, |(i, mutations)| {
        let text = mutations
            .iter()
            .fold(corpus[i].clone(), |t, m| apply(&t, m));
        let outcome = check(&text)
            .map_err(|e| TestCaseError::fail(format!("{e}\n--- mutant ---\n{text}")))?;
        seen.borrow_mut().push(outcome);
        Ok(())
    });
    drop(std::panic::take_hook());
    if let Err(e) = result {
        panic!("{e}");
    }
    let seen = seen.into_inner();
    let count = |o| seen.iter().filter(|&&x| x == o).count();
    let (rejected, refused, ran) = (
        count(Outcome::Rejected),
        count(Outcome::Refused),
        count(Outcome::Ran),
    );
    println!(
        "{} mutants: {rejected} rejected, {refused} refused, {ran} ran",
        seen.len()
    );
    // Both ways are taken often: a fuzzer whose mutants all fail to load tests little.
    assert!(
        rejected * 10 >= seen.len() && ran * 10 >= seen.len(),
        "{rejected} rejected, {ran} ran"
    );
}

/// The seed from `FAIRSTREAM_FUZZ_SEED`, or `default`.
fn seed(default: u64) -> u64 {
    std::env::var("FAIRSTREAM_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Cases from `FAIRSTREAM_FUZZ_CASES`, or `default`.
fn cases(default: u32) -> u32 {
    std::env::var("FAIRSTREAM_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn mutated_scenarios_load_or_are_refused_at_a_field_and_run_within_their_estimate() {
    fuzz(cases(256), seed(1));
}

#[test]
#[ignore = "nightly: 10^4 mutants or more (FAIRSTREAM_FUZZ_CASES)"]
fn nightly_ten_thousand_mutants() {
    // A new seed every night (the wall clock), printed so that a failure can be repeated.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    fuzz(cases(10_000).max(10_000), seed(now));
}

#[test]
fn mutations_change_the_text_where_they_say() {
    let text = "a = \"1s\"\nb = 20\n";
    assert_eq!(
        apply(text, &Mutation::String { at: 0.0, which: 2 }),
        "a = \"1e30Mbps\"\nb = 20\n"
    );
    assert_eq!(
        apply(text, &Mutation::Number { at: 0.0, which: 0 }),
        "a = \"1s\"\nb = 0\n"
    );
    assert_eq!(apply(text, &Mutation::DropLine { at: 0.0 }), "b = 20\n");
    assert_eq!(
        apply(text, &Mutation::Line { at: 1.0, which: 5 }),
        format!("{text}packets = true\n")
    );
    assert_eq!(
        apply(text, &Mutation::Delete { at: 0.0, len: 4 }),
        "\"1s\"\nb = 20\n"
    );
}
