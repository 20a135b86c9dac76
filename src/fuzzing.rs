//! The fuzz targets' bodies: one function per kind of input a user hands retrysim, each fed
//! bytes along the path that input takes. Every one must return, without panicking, for any
//! bytes: a refusal is an error that displays. They live in the library, not in `fuzz/`, so the
//! stable-Rust test `tests/fuzz_corpus.rs` replays the corpora through the same code that
//! `cargo fuzz` runs. Each is cheap (no files, no threads), so a campaign runs fast.

use std::path::PathBuf;

use crate::Error;
use crate::calibrate;
use crate::config::{Change, ConfigError, Origin, Source};
use crate::shard::{self, Header, RunsReader, Shard};
use crate::sim::{self, Job};
use crate::theory;
use crate::time::Tick;

/// The most intents a fuzzed config may run, over every point, configuration and replication.
const MAX_INTENTS: u64 = 2_000;
/// Runs are cut at this much simulated time, so a slow-burning config stays quick.
const HORIZON: Tick = Tick(10_000_000);

/// A config file: parse → validate → theory → a tiny run. A config validation accepts must
/// run and end, and one it refuses must get an error that displays.
pub fn config(data: &[u8]) {
    let text = match String::from_utf8(data.to_vec()) {
        Ok(text) => text,
        Err(e) => {
            let _ = ConfigError::not_utf8("fuzz.toml", &e).to_string();
            return;
        }
    };
    let source = Source {
        name: "fuzz.toml".into(),
        text,
        origin: Origin::Text,
    };
    let sweep = match source.sweep() {
        Ok(sweep) => sweep,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    // An [explore] table is read; a refusal must display.
    if let Err(e) = crate::explore::Spec::read(&source) {
        let _ = e.to_string();
        return;
    }
    // A [tune] table is read and every candidate it makes is built; a refusal must display.
    match source.tune() {
        Ok(Some(spec)) => {
            let _ = crate::tune::search::candidates(&spec).len();
        }
        Ok(None) => {}
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    }
    if sweep.most_calls() > MAX_INTENTS {
        return;
    }
    // Each run on its own, as the pool would run it, without the cost of starting threads.
    for (point, mut p) in sweep.points().enumerate() {
        let exp = &mut p.experiment;
        exp.horizon = exp.horizon.min(HORIZON);
        for (policy, rule) in exp.policies.iter().enumerate() {
            let _ = theory::for_policy(exp, rule);
            for replication in 0..exp.replications {
                let job = Job {
                    point,
                    policy,
                    replication,
                };
                sim::totals(exp, job);
            }
        }
    }
}

/// A config whose one policy is the gRPC preset, its service config left to follow. The tool
/// is read-only, so a `hedgingPolicy` is validated to the end, not refused as unsafe.
const GRPC_CONFIG: &str = "name = \"grpc\"\n[workload]\ntasks = 1\n[[tool]]\nname = \"api\"\n\
                           kind = \"read_only\"\n[[policy]]\nname = \"grpc\"\npreset.grpc = ";

/// A gRPC service config's JSON, as `preset.grpc = '''…'''` takes it: the JSON is written as a
/// TOML string into a config, which is validated as a file would be. The JSON reader and its
/// refusals by JSON path are the preset's own, so only a config can reach them.
pub fn grpc_service_config(data: &[u8]) {
    let Ok(json) = std::str::from_utf8(data) else {
        return;
    };
    let source = Source {
        name: "fuzz.toml".into(),
        text: format!("{GRPC_CONFIG}{}\n", toml::Value::String(json.into())),
        origin: Origin::Text,
    };
    if let Err(e) = source.sweep() {
        let _ = e.to_string();
    }
}

/// How a fuzzed trace is named in errors.
const TRACE: &str = "fuzz-trace";

/// An OTLP JSON export (one object per line) as `calibrate` reads it, and the config it writes
/// from what it read. Input that would be read as an access log is left to that target.
pub fn otlp_line(data: &[u8]) {
    if first_byte(data) == Some(b'{') {
        read_trace(data);
    }
}

/// A CSV access log as `calibrate` reads it, and the config it writes from what it read.
/// Input that would be read as an OTLP export is left to that target.
pub fn access_log_csv(data: &[u8]) {
    if first_byte(data) != Some(b'{') {
        read_trace(data);
    }
}

/// A data file a config names: its bytes read as a latency file's `latency` column, a model's
/// `tokens`, and `arrival = "recorded"`'s `at`.
pub fn samples_csv(data: &[u8]) {
    use crate::config::latency::{Quantity, read_samples};
    for column in [
        ("latency", Quantity::Duration),
        ("tokens", Quantity::Tokens),
        ("at", Quantity::Duration),
    ] {
        if let Err(e) = read_samples(data, "fuzz.csv", column) {
            let _ = e.len();
        }
    }
}

/// A tool's `health` file, as a config reads it.
pub fn health_csv(data: &[u8]) {
    let base = crate::model::Faults::default();
    if let Err(e) = crate::config::validate::health::read(data, "fuzz.csv", &base) {
        let _ = e.len();
    }
}

/// The byte `calibrate` tells a trace's format by: its first that is not white space.
fn first_byte(data: &[u8]) -> Option<u8> {
    data.iter().find(|b| !b.is_ascii_whitespace()).copied()
}

/// A trace through `calibrate`, from its bytes to the config text it writes.
fn read_trace(data: &[u8]) {
    match calibrate::read_from(data, TRACE) {
        Ok(observed) => {
            let _ = calibrate::write::config(&observed, TRACE, "fuzz", (None, None));
            let clock = calibrate::incident::clock(&observed);
            let _ = calibrate::write::config(&observed, TRACE, "fuzz", (clock, None));
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
}

/// A shard folder's files as `merge` reads them. The first byte picks the file: even, the rest
/// is `shard.toml`, read and checked as one shard of a set; odd, the rest is `runs.bin`, read as
/// holding `first / 2` runs and nothing after. A shard crosses machines and shared volumes: its
/// files are input, even if retrysim wrote them.
pub fn shard(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let read = if first.is_multiple_of(2) {
        header(rest)
    } else {
        runs(u64::from(first / 2), rest)
    };
    if let Err(e) = read {
        let _ = e.to_string();
    }
}

/// The folder a fuzzed shard's files are named as in errors.
const SHARD_DIR: &str = "fuzz.shard-0-of-1";

/// `shard.toml` as `Shard::open` reads it, then checked as a set of one, as `merge` checks it.
fn header(bytes: &[u8]) -> Result<(), Error> {
    // A header that is not UTF-8 cannot be read as text: merge says so, and reads no further.
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Ok(());
    };
    let header: Header = toml::from_str(text)
        .map_err(|e| Error::BadOutput(format!("{SHARD_DIR}/{}: {e}", shard::HEADER)))?;
    let one = Shard {
        dir: PathBuf::from(SHARD_DIR),
        header,
    };
    shard::whole_set(vec![one]).map(drop)
}

/// `runs.bin` as `merge` reads it: `count` runs, each of the job it should be, then its end.
fn runs(count: u64, bytes: &[u8]) -> Result<(), Error> {
    let mut reader = RunsReader::new(PathBuf::from(SHARD_DIR).join("runs.bin"), bytes);
    for index in 0..count {
        reader.next(index)?;
    }
    reader.end()
}

/// The config `--set`, `--scan` and `--seed` change: tiny, valid, with one tool and one policy
/// for the flags' paths to name.
const TINY: &str = "name = \"tiny\"\n[workload]\ntasks = 200\n[[tool]]\nname = \"charge\"\n\
                    reply_loss = 0.2\n[[policy]]\nname = \"retry\"\nmax_attempts = 3\n";

/// The command line's changes to a config, a line each: `set PATH=VALUE` for
/// `--set PATH=VALUE`, `scan PATH=VALUES` for `--scan`, `seed N` for `--seed`; other lines are
/// what the command line would refuse before reading them, and are skipped. The changed config
/// is validated, not run: the flags' own reading and their errors placed on the flag are what
/// this target is for, and the config target runs what validates.
pub fn set_scan(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let changes: Vec<Change> = text.lines().filter_map(change).collect();
    changed_tiny(&changes);
}

/// The bytes of an HTTP request as `retrysim serve` receives them, read a byte at a time and
/// whole, as it reads a head come in pieces: the head read or refused, its bounds held.
pub fn http_request(data: &[u8]) {
    use crate::request_head::{MOST_BODY, MOST_HEAD, read};
    let whole = read(data);
    for end in 0..data.len().min(MOST_HEAD + 8) {
        if let Ok(Some(head)) = read(&data[..end]) {
            assert_eq!(
                Ok(Some(head)),
                whole,
                "a head read early reads the same whole"
            );
            break;
        }
    }
    if let Ok(Some(head)) = whole {
        assert!(head.length <= MOST_BODY && head.body_at <= data.len());
        assert!(head.body_at - 4 <= MOST_HEAD);
    }
}

/// What `retrysim endpoint` reads of a request beside hyper's own parsing: the first line a
/// place to read an operation from (`--operation-from`), the second an `Idempotency-Key`
/// header's value, the rest the body. Whatever comes, the operation and key keep their bounds.
pub fn endpoint_request(data: &[u8]) {
    use crate::endpoint::keys::{self, MOST_KEY_BYTES};
    use crate::endpoint::operation::{MOST_OPERATION_CHARS, OperationFrom};
    let mut parts = data.splitn(3, |&b| b == b'\n');
    let (Some(from), Some(key)) = (parts.next(), parts.next()) else {
        return;
    };
    let body = parts.next().unwrap_or_default();
    let (Ok(from), Ok(key)) = (std::str::from_utf8(from), std::str::from_utf8(key)) else {
        return;
    };
    let key = match keys::from_header(key) {
        Ok(key) => key,
        Err(keys::TooLong) => return assert!(key.trim().len() > MOST_KEY_BYTES - 2),
    };
    if let Some(k) = &key {
        assert!(!k.is_empty() && k.len() <= MOST_KEY_BYTES);
    }
    let Ok(from) = from.parse::<OperationFrom>() else {
        return;
    };
    let header = |name: &str| (name == "x-order").then_some("o-1");
    if let Some(op) = from.read(key.as_deref(), header, body) {
        assert!(!op.is_empty() && op.chars().count() <= MOST_OPERATION_CHARS);
    }
}

/// A model request's body as `retrysim endpoint` reads it (OpenAI's or Anthropic's): read or
/// refused with a reason, and what it writes back for it well-formed JSON in both dialects.
pub fn model_request(data: &[u8]) {
    use crate::endpoint::wire::{self, Dialect};
    let req = match wire::read_request(data) {
        Ok(req) => req,
        Err(why) => return assert!(!why.is_empty()),
    };
    assert!(req.model.chars().count() <= 128);
    for d in [Dialect::OpenAi, Dialect::Anthropic] {
        let whole = wire::completion(d, &req, "id", (1, 2));
        assert!(serde_json::from_str::<serde_json::Value>(&whole).is_ok());
        let stream = wire::stream_start(d, &req, "id", 1) + &wire::stream_end(d, &req, "id", 0);
        assert!(stream.ends_with("\n\n"));
    }
}

/// A policy claimed for a trace's client (`calibrate --claimed`): read and checked, or
/// refused with an error that displays.
pub fn claimed_policy(data: &[u8]) {
    let Ok(text) = String::from_utf8(data.to_vec()) else {
        return;
    };
    match calibrate::claimed::of(Source::from_text("fuzz.toml", text)) {
        Ok(claimed) => assert!(!claimed.name.is_empty()),
        Err(e) => {
            let _ = e.to_string();
        }
    }
}

/// What the classroom page posts (`{"sets": ["PATH=VALUE", …]}`), read as `retrysim serve`
/// reads it and made to a config: the changes validated, not run, as for [`set_scan`].
pub fn page_request(data: &[u8]) {
    let changes = match Change::posted(data) {
        Ok(changes) => changes,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    changed_tiny(&changes);
}

/// `changes` made to the small config and validated, not run; a refusal must display.
fn changed_tiny(changes: &[Change]) {
    let source = Source {
        name: "tiny.toml".into(),
        text: TINY.into(),
        origin: Origin::Text,
    };
    if let Err(e) = source.changed(changes) {
        let _ = e.to_string();
    }
}

/// One line as the change it stands for.
fn change(line: &str) -> Option<Change> {
    if let Some(flag) = line.strip_prefix("set ") {
        Some(Change::Set(flag.into()))
    } else if let Some(flag) = line.strip_prefix("scan ") {
        Some(Change::Scan(flag.into()))
    } else {
        line.strip_prefix("seed ")?.parse().ok().map(Change::Seed)
    }
}
