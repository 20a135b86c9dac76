//! `retrysim endpoint`: a configured tool over real HTTP, held to the commits it counts. A
//! scripted charge loses its first request's reply (after committing), then its second request,
//! then answers: a plain client over raw sockets sees a lost reply as a connection closed with
//! no answer, a retry under the same key answered with the stored receipt (no second commit), a
//! retry without a key charged again, and a lost request as a close that committed nothing.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::Duration;

const CONFIG: &str = r#"name = "charges"
seed = 1
[workload]
tasks = 1
[[tool]]
name = "charge"
script = [
    { outcome = "lost_reply", after = "5ms" },
    { outcome = "ok", after = "5ms" },
    { outcome = "lost_reply", after = "5ms" },
    { outcome = "ok", after = "5ms" },
    { outcome = "lost_request", after = "5ms" },
    { outcome = "ok", after = "5ms" },
]
[[policy]]
name = "p"
"#;

/// `retrysim endpoint c.toml --port 0` with `args`, `config` written in a folder of its own:
/// the process, its address read from its first line, and the rest of its stdout.
struct Endpoint {
    child: Child,
    addr: String,
    stdout: BufReader<ChildStdout>,
    dir: tempfile::TempDir,
}

fn start(config: &str, args: &[&str]) -> Endpoint {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("c.toml"), config).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_retrysim"))
        .args(["endpoint", "c.toml", "--port", "0"])
        .args(args)
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let addr = line
        .trim()
        .trim_start_matches("http://")
        .trim_end_matches('/');
    Endpoint {
        child,
        addr: addr.to_string(),
        stdout,
        dir,
    }
}

/// One request, `Connection: close`: the answer as it came, until the connection closed.
fn raw(addr: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).unwrap();
    let mut answer = Vec::new();
    let _ = s.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}

/// One POST: the status and body, or `None` where the server closed the connection without an
/// answer.
fn post(addr: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Option<(u16, String)> {
    let answer = raw(addr, "POST", path, headers, body);
    if answer.is_empty() {
        return None;
    }
    let status = answer[9..12].parse().unwrap();
    let body = answer
        .split_once("\r\n\r\n")
        .map(|x| x.1.to_string())
        .unwrap();
    Some((status, body))
}

/// The raw answer to one POST of JSON.
fn raw_post(addr: &str, path: &str, body: &str) -> String {
    raw(
        addr,
        "POST",
        path,
        &[("Content-Type", "application/json")],
        body,
    )
}

/// The raw answer to one GET.
fn get(addr: &str, path: &str) -> String {
    raw(addr, "GET", path, &[], "")
}

#[test]
fn a_lost_reply_commits_once_a_key_replays_it_and_a_reset_commits_nothing() {
    let mut e = start(
        CONFIG,
        &["--requests", "6", "--operation-from", "json:order_id"],
    );
    let addr = e.addr.clone();
    let keyed = [("Idempotency-Key", "k1"), ("X-Client", "keyed")];
    let bare = [("X-Client", "bare")];
    // A lost reply: the charge commits, the client hears nothing; the retry under the same
    // key is answered with the stored receipt.
    assert_eq!(post(&addr, "/charge", &keyed, r#"{"order_id":"o1"}"#), None);
    let (status, replay) = post(&addr, "/charge", &keyed, r#"{"order_id":"o1"}"#).unwrap();
    assert_eq!(status, 200);
    assert!(replay.contains("\"receipt\":\"charge-0\""), "{replay}");
    // A lookup finds the key's receipt, and nothing under a key never used.
    assert!(get(&addr, "/charge/operations/k1").contains("\"receipt\":\"charge-0\""));
    assert!(get(&addr, "/charge/operations/k9").starts_with("HTTP/1.1 404"));
    // Without a key the retry is a second charge.
    assert_eq!(post(&addr, "/charge", &bare, r#"{"order_id":"o2"}"#), None);
    let (status, _) = post(&addr, "/charge", &bare, r#"{"order_id":"o2"}"#).unwrap();
    assert_eq!(status, 200);
    // A lost request: closed, nothing committed; the retry charges once.
    assert_eq!(post(&addr, "/charge", &bare, r#"{"order_id":"o3"}"#), None);
    assert_eq!(
        post(&addr, "/charge", &bare, r#"{"order_id":"o3"}"#)
            .unwrap()
            .0,
        200
    );
    assert!(e.child.wait().unwrap().success());
    let out = e.dir.path().join("out/charges.endpoint");
    let requests = std::fs::read_to_string(out.join("requests.csv")).unwrap();
    let committed: Vec<(&str, &str)> = requests
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[4], f[6])
        })
        .collect();
    assert_eq!(
        committed,
        [
            ("lost_reply", "true"),
            ("replayed", "false"),
            ("lost_reply", "true"),
            ("ok", "true"),
            ("lost_request", "false"),
            ("ok", "true"),
        ]
    );
    // Recounted from the requests: o1 once, o2 twice (one duplicate), o3 once.
    let figures = std::fs::read_to_string(out.join("endpoint.csv")).unwrap();
    let row = |client: &str| {
        figures
            .lines()
            .find(|l| l.starts_with(&format!("{client},")))
            .unwrap()
            .split(',')
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    // operations, attempts, commits, duplicates
    let pick = |r: Vec<String>| (r[2].clone(), r[3].clone(), r[5].clone(), r[6].clone());
    assert_eq!(
        pick(row("keyed")),
        ("1".into(), "2".into(), "1".into(), "0".into())
    );
    assert_eq!(
        pick(row("bare")),
        ("2".into(), "4".into(), "3".into(), "1".into())
    );
    // The access log is one `calibrate` reads: a resend where the order was sent before.
    let log = std::fs::read_to_string(out.join("access-log.csv")).unwrap();
    let resends: Vec<&str> = log
        .lines()
        .skip(1)
        .map(|l| l.rsplit(',').next().unwrap())
        .collect();
    assert_eq!(resends, ["false", "true", "false", "true", "false", "true"]);
    let log = out.join("access-log.csv");
    let o = crate::binary::retrysim(&["calibrate", log.to_str().unwrap()], e.dir.path());
    assert!(o.status.success(), "{}", crate::binary::text(&o.stderr));
    simulators_files(&out, e.dir.path());
}

/// The run of the first test in the simulator's files, each client a configuration: bare's two
/// orders took four attempts and three commits, keyed's one order two attempts and one commit;
/// `compare` reads the folder as it reads a simulated run's.
fn simulators_files(out: &std::path::Path, dir: &std::path::Path) {
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let mut lines = summary.lines();
    let columns: Vec<&str> = lines.next().unwrap().split(',').collect();
    let at = |name: &str| columns.iter().position(|c| *c == name).unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let figures: Vec<[&str; 4]> = rows
        .iter()
        .map(|r| {
            [
                "policy",
                "intents",
                "attempts_per_intent",
                "duplicates_per_intent",
            ]
            .map(|c| r[at(c)])
        })
        .collect();
    assert_eq!(
        figures,
        [
            ["bare", "2", "2.000000", "0.500000"],
            ["keyed", "1", "2.000000", "0.000000"],
        ]
    );
    let attempts = std::fs::read_to_string(out.join("attempts.csv")).unwrap();
    assert_eq!(attempts.lines().count(), 1 + 6);
    let folder = out.to_str().unwrap();
    let o = crate::binary::retrysim(&["compare", folder, folder], dir);
    assert!(o.status.success(), "{}", crate::binary::text(&o.stderr));
    assert!(crate::binary::text(&o.stdout).contains("bare "));
}

/// A model tool in OpenAI's wire format: a whole streamed answer is `data:` blocks ending
/// `data: [DONE]` and the chunked body's end; a stream that breaks (breaks at 1 000 a second
/// of streaming, certain within an answer of 40 tokens at 400 a second) sends its 200 and some
/// blocks, then the connection is cut with neither. Anthropic's dialect answers at
/// `…/v1/messages`; a request that is no model request is a 400 in the dialect's shape.
#[test]
fn a_model_streams_whole_or_is_cut_mid_body() {
    let config = |stream_break: f64| {
        format!(
            "name = \"llm\"\nseed = 3\n[workload]\ntasks = 1\n[[tool]]\nname = \"llm\"\n\
             kind = \"model\"\nrequest_latency = {{ dist = \"constant\", value = \"1ms\" }}\n\
             reply_latency = {{ dist = \"constant\", value = \"1ms\" }}\n\
             model = {{ input_tokens = {{ dist = \"constant\", value = 100 }}, \
             output_tokens = {{ dist = \"constant\", value = 40 }}, max_tokens = 64, \
             first_token = {{ dist = \"constant\", value = \"5ms\" }}, tokens_per_second = 400, \
             stream_break = {stream_break} }}\n[[policy]]\nname = \"p\"\n"
        )
    };
    let chat = r#"{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}"#;
    for (stream_break, whole) in [(0.0, true), (1000.0, false)] {
        let mut e = start(&config(stream_break), &["--requests", "3"]);
        let addr = e.addr.clone();
        let raw = raw_post(&addr, "/llm/v1/chat/completions", chat);
        assert!(raw.starts_with("HTTP/1.1 200"), "{raw}");
        assert!(raw.contains("text/event-stream") && raw.contains("chat.completion.chunk"));
        assert_eq!(raw.contains("data: [DONE]"), whole, "{raw}");
        assert_eq!(raw.ends_with("0\r\n\r\n"), whole, "{raw}");
        let bad = raw_post(&addr, "/llm/v1/messages", r#"{"model":"m"}"#);
        assert!(
            bad.starts_with("HTTP/1.1 400") && bad.contains("invalid_request_error"),
            "{bad}"
        );
        let plain = raw_post(&addr, "/llm", chat);
        assert!(plain.starts_with("HTTP/1.1 404"), "{plain}");
        let _ = e.child.kill();
        let _ = e.child.wait();
    }
}

/// `--predict`: a client that sends each order once, against a charge that loses 20 % of its
/// replies, has exactly the attempts (1) and duplicates (0) a policy of one attempt predicts —
/// both exact on both sides, so they agree whatever the draws — and differs in both from a
/// policy of three without a key (which would retry, and charge again after, every lost
/// reply); the verdict line says which figures. (Its success rate is held to the prediction too, a statistical comparison this test
/// leaves to `clients/check.py`'s kind.)
#[test]
fn a_client_is_held_to_the_policy_it_is_said_to_have() {
    let config = "name = \"once\"\nseed = 5\nreplications = 10\n[workload]\ntasks = 60\n\
        [[tool]]\nname = \"charge\"\nreply_loss = 0.2\n\
        service_time = { dist = \"constant\", value = \"1ms\" }\n\
        [[policy]]\nname = \"once\"\n[[policy]]\nname = \"thrice\"\nmax_attempts = 3\n";
    let row = |text: &str, figure: &str| -> String {
        (text.lines())
            .find(|l| l.starts_with("me ") && l.split_whitespace().nth(1) == Some(figure))
            .unwrap_or_else(|| panic!("no {figure} row in {text}"))
            .to_string()
    };
    for policy in ["once", "thrice"] {
        let args = [
            "--requests",
            "60",
            "--operation-from",
            "json:order_id",
            "--predict",
        ];
        let mut e = start(config, &[&args[..], &[policy]].concat());
        let addr = e.addr.clone();
        for order in 0..60 {
            let body = format!("{{\"order_id\":{order}}}");
            post(&addr, "/charge", &[("X-Client", "me")], &body);
        }
        let mut rest = String::new();
        e.stdout.read_to_string(&mut rest).unwrap();
        assert!(e.child.wait().unwrap().success());
        let attempts = row(&rest, "attempts");
        assert!(attempts.contains("1.0000 ± 0.0000"), "{rest}");
        let duplicates = row(&rest, "duplicates");
        match policy {
            "once" => {
                assert!(attempts.ends_with("agrees"), "{rest}");
                assert!(duplicates.ends_with("agrees"), "{rest}");
            }
            _ => {
                assert!(attempts.ends_with("differs") && duplicates.ends_with("differs"));
                let verdict = "client \"me\" differs from \"thrice\" in attempts, duplicates";
                assert!(rest.contains(verdict), "{rest}");
            }
        }
    }
}

/// What the endpoint does not serve yet is refused before it listens, not served without:
/// a tool with outages, and a prediction by a policy the config does not have.
#[test]
fn what_the_endpoint_cannot_serve_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let configs = crate::binary::configs();
    let outage = configs.join("zone-outage.toml");
    let o = crate::binary::retrysim(&["endpoint", outage.to_str().unwrap()], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(
        crate::binary::text(&o.stderr)
            .contains("replicas, among which a balancer in the client chooses")
    );
    let demo = configs.join("endpoint-demo.toml");
    let args = ["endpoint", demo.to_str().unwrap(), "--predict", "requests"];
    let o = crate::binary::retrysim(&args, dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(crate::binary::text(&o.stderr).contains("it has urllib3, tenacity, tenacity-keyed"));
    assert!(o.stdout.is_empty() && !dir.path().join("out").exists());
}

/// A throttle's headers: `Retry-After` in whole seconds, rounded up, `retry-after-ms` to the
/// millisecond, and `x-should-retry` where the tool's server advises; under `--time-scale`, the
/// wait as the client's clock reads it.
#[test]
fn a_throttle_says_how_long_to_wait_and_whether_to_retry() {
    let config = "name = \"t\"\n[workload]\ntasks = 1\n[[tool]]\nname = \"charge\"\n\
        should_retry_header = true\n\
        script = [{ outcome = \"429\", after = \"1ms\", retry_after = \"250ms\" }]\n\
        [[policy]]\nname = \"p\"\n";
    let mut e = start(config, &["--requests", "1"]);
    let addr = e.addr.clone();
    let raw = raw_post(&addr, "/charge", "{}").to_ascii_lowercase();
    assert!(raw.starts_with("http/1.1 429"), "{raw}");
    for header in [
        "retry-after: 1\r\n",
        "retry-after-ms: 250\r\n",
        "x-should-retry: true\r\n",
    ] {
        assert!(raw.contains(header), "{header:?} in {raw}");
    }
    assert!(e.child.wait().unwrap().success());
    // At ten times the config's pace the wait is told on the client's clock: 25 ms.
    let mut e = start(config, &["--requests", "1", "--time-scale", "10"]);
    let raw = raw_post(&e.addr, "/charge", "{}").to_ascii_lowercase();
    assert!(raw.contains("retry-after-ms: 25\r\n"), "{raw}");
    assert!(e.child.wait().unwrap().success());
}

/// The tool's server at its door, in real time: a rate limit of 2 a second passes two requests
/// at once and throttles the third, saying to come back in under half a second; one worker
/// with a line of one serves the first of three requests sent 50 ms apart, holds the second
/// until the first's 300 ms of work is done, and turns the third away; an outage fails fast
/// until it ends, and one that hangs holds a request unanswered until it ends.
#[test]
fn a_tool_throttles_queues_and_goes_down_on_the_wall_clock() {
    let tool = |service: &str, server: &str| {
        format!(
            "name = \"door\"\n[workload]\ntasks = 1\n[[tool]]\nname = \"charge\"\n\
             service_time = {{ dist = \"constant\", value = \"{service}\" }}\n{server}\n\
             [[policy]]\nname = \"p\"\n"
        )
    };
    let limited = tool("1ms", "rate_limit = { per_second = 2, burst = 2 }");
    let mut e = start(&limited, &["--requests", "3"]);
    let statuses: Vec<String> = (0..3).map(|_| raw_post(&e.addr, "/charge", "{}")).collect();
    assert!(statuses[0].starts_with("HTTP/1.1 200") && statuses[1].starts_with("HTTP/1.1 200"));
    let third = statuses[2].to_ascii_lowercase();
    assert!(third.starts_with("http/1.1 429") && third.contains("retry-after: 1\r\n"));
    let ms: u64 = (third.split("retry-after-ms: ").nth(1).unwrap())
        .split("\r\n")
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((300..=500).contains(&ms), "{ms} ms");
    assert!(e.child.wait().unwrap().success());

    let mut e = start(
        &tool("300ms", "workers = 1\nline_limit = 1"),
        &["--requests", "3"],
    );
    let sent = std::time::Instant::now();
    let handles: Vec<_> = (0..3)
        .map(|k| {
            let addr = e.addr.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(50 * k));
                let status = raw_post(&addr, "/charge", "{}")[9..12].to_string();
                (status, sent.elapsed())
            })
        })
        .collect();
    let answers: Vec<(String, Duration)> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let statuses: Vec<&str> = answers.iter().map(|a| a.0.as_str()).collect();
    assert_eq!(statuses, ["200", "200", "503"]);
    assert!(answers[1].1 >= Duration::from_millis(600), "{answers:?}");
    assert!(answers[2].1 < Duration::from_millis(300), "{answers:?}");
    assert!(e.child.wait().unwrap().success());

    let down = "outages = [{ from = \"0s\", until = \"400ms\", mode = \"fail_fast\" }]";
    let mut e = start(&tool("1ms", down), &["--requests", "2"]);
    assert!(raw_post(&e.addr, "/charge", "{}").starts_with("HTTP/1.1 502"));
    std::thread::sleep(Duration::from_millis(450));
    assert!(raw_post(&e.addr, "/charge", "{}").starts_with("HTTP/1.1 200"));
    assert!(e.child.wait().unwrap().success());

    let hangs = "outages = [{ from = \"0s\", until = \"400ms\", mode = \"hang\" }]";
    let mut e = start(&tool("1ms", hangs), &["--requests", "1"]);
    let sent = std::time::Instant::now();
    assert_eq!(raw_post(&e.addr, "/charge", "{}"), "");
    assert!(
        sent.elapsed() >= Duration::from_millis(300),
        "{:?}",
        sent.elapsed()
    );
    assert!(e.child.wait().unwrap().success());
}

/// Where the tool's answers depend on when requests come, the prediction replays the client's
/// arrivals: a limit of 2 a second (burst 1) passes orders sent at 0 and 620 ms and throttles
/// those at 120, 240, 740 and 860 ms — a third succeed — and the simulation of a client that
/// sends each once, at those times, predicts just that (a replay of the config's batch of six
/// at once would predict one in six).
#[test]
fn a_prediction_replays_when_the_client_sent() {
    let config = "name = \"paced\"\nseed = 5\nreplications = 4\n[workload]\ntasks = 6\n\
        [[tool]]\nname = \"charge\"\nrate_limit = { per_second = 2, burst = 1 }\n\
        service_time = { dist = \"constant\", value = \"1ms\" }\n\
        [[policy]]\nname = \"once\"\n";
    let args = ["--requests", "6", "--operation-from", "json:order_id"];
    let mut e = start(config, &[&args[..], &["--predict", "once"]].concat());
    let began = std::time::Instant::now();
    for (order, ms) in [0u64, 120, 240, 620, 740, 860].into_iter().enumerate() {
        let at = Duration::from_millis(ms);
        std::thread::sleep(at.saturating_sub(began.elapsed()));
        post(
            &e.addr,
            "/charge",
            &[("X-Client", "me")],
            &format!("{{\"order_id\":{order}}}"),
        );
    }
    let mut rest = String::new();
    e.stdout.read_to_string(&mut rest).unwrap();
    assert!(e.child.wait().unwrap().success());
    assert!(rest.contains("replayed when they arrived"), "{rest}");
    let success = (rest.lines())
        .find(|l| l.starts_with("me ") && l.contains(" success "))
        .unwrap_or_else(|| panic!("{rest}"));
    assert!(
        success.contains("0.3333 ± 0.2108      0.3333 ± 0.0000"),
        "{success}"
    );
    assert!(
        rest.contains("client \"me\" behaves as \"once\" predicts"),
        "{rest}"
    );
}
