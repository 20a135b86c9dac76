//! `retrysim serve`: the classroom page. Over plain HTTP here (the index, a page, a run, a
//! refused value, what is not there); in a real headless browser in `browser`.

mod browser;
mod http;
mod limits;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

/// A server on a free port, stopped when dropped.
pub struct Served {
    pub child: Child,
    pub url: String,
}

impl Served {
    /// Starts `retrysim serve --port 0` in `dir` with `args` and reads back its address.
    pub fn start(dir: &Path, args: &[&str]) -> Served {
        Served::start_with(dir, args, &[])
    }

    /// [`Served::start`] with `env` set for the server (its `TMPDIR`, where its scratch goes).
    pub fn start_with(dir: &Path, args: &[&str], env: &[(&str, &Path)]) -> Served {
        let child = Command::new(env!("CARGO_BIN_EXE_retrysim"))
            .args(["serve", "--port", "0"])
            .args(args)
            .envs(env.iter().copied())
            .current_dir(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the binary runs");
        // Held from here on, so a failure to read the address stops the server too.
        let mut served = Served {
            child,
            url: String::new(),
        };
        let mut line = String::new();
        BufReader::new(served.child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        served.url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .to_string();
        served
    }

    /// Stops the server as a reader does (Ctrl-C) and waits for it: its exit status.
    pub fn stop(mut self) -> std::process::ExitStatus {
        let _ = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status();
        self.child.wait().expect("the server ends")
    }
}

impl Drop for Served {
    /// Stops the server as a reader does, with Ctrl-C (SIGINT), so it removes its scratch
    /// folder; killed outright only if it has not stopped within five seconds.
    fn drop(&mut self) {
        if let Ok(Some(_)) = self.child.try_wait() {
            return;
        }
        let _ = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status();
        let started = std::time::Instant::now();
        while started.elapsed() < std::time::Duration::from_secs(5) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn post_run(served: &Served, id: &str, sets: &[&str]) -> (u16, Value) {
    let body = serde_json::json!({ "sets": sets }).to_string();
    let (status, text) = http::request("POST", &format!("{}x/{id}/run", served.url), Some(&body));
    (status, serde_json::from_str(&text).expect("a JSON answer"))
}

#[test]
fn serves_the_index_a_page_and_a_run_from_an_empty_folder() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::start(dir.path(), &[]);
    assert!(
        served.url.starts_with("http://127.0.0.1:"),
        "{}",
        served.url
    );
    let (status, index) = http::request("GET", &served.url, None);
    assert_eq!(status, 200);
    assert!(index.contains("href=\"/x/duplicate-curve\""), "{index}");
    assert!(
        index.contains("href=\"/x/reconciliation\""),
        "scenarios are offered too"
    );
    assert!(
        !index.contains("href=\"/x/tune-retry\""),
        "a [tune] config is tune's"
    );
    let (status, page) = http::request("GET", &format!("{}x/duplicate-curve", served.url), None);
    assert_eq!(status, 200);
    // Sliders for the main keys; the swept key is shown, not offered.
    assert!(
        page.contains("data-path=\"tool.charge.request_loss\""),
        "{page}"
    );
    assert!(
        !page.contains("data-path=\"tool.charge.reply_loss\""),
        "{page}"
    );
    // Every asset the page names is served by retrysim: nothing from elsewhere.
    for asset in ["/assets/serve.js", "/assets/serve.css"] {
        assert!(page.contains(asset), "{asset}");
        let (status, _) = http::request("GET", &format!("{}{}", served.url, &asset[1..]), None);
        assert_eq!(status, 200, "{asset}");
    }
    assert!(
        !page.contains("https://") && !page.contains("http://"),
        "no outside address"
    );

    let (status, ran) = post_run(
        &served,
        "duplicate-curve",
        &["replications=3", "workload.tasks=500"],
    );
    assert_eq!(status, 200, "{ran}");
    let table = ran["table"].as_str().unwrap();
    assert!(table.contains("3 replications · 500 tasks each"), "{table}");
    let charts: Vec<&str> = ran["charts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    // In the order the config lists them: the duplicate curve is what it is about.
    assert_eq!(charts, ["duplicate-curve", "attempts-curve", "comparison"]);
    assert!(
        ran["charts"][0]["svg"]
            .as_str()
            .unwrap()
            .starts_with("<svg")
    );
    // A served run leaves nothing in the folder the server was started from.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn a_shipped_config_that_reads_a_latency_file_runs_from_any_folder() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::start(dir.path(), &[]);
    let (status, ran) = post_run(&served, "timeout-percentile", &["workload.tasks=200"]);
    assert_eq!(status, 200, "{ran}");
}

#[test]
fn a_bad_value_gets_the_command_lines_located_error() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::start(dir.path(), &[]);
    let (status, ran) = post_run(&served, "duplicate-curve", &["tool.charge.request_loss=2"]);
    assert_eq!(status, 422);
    let error = ran["error"].as_str().unwrap();
    assert!(
        error.contains("tool[0].request_loss: 2 is not a probability"),
        "{error}"
    );
    assert!(error.contains("allowed: a number from 0 to 1"), "{error}");
    let (status, ran) = post_run(&served, "duplicate-curve", &["policy.no-key.max_atempts=3"]);
    assert_eq!(status, 422);
    assert!(
        ran["error"].as_str().unwrap().contains("max_attempts"),
        "{ran}"
    );
    let (status, text) = http::request(
        "POST",
        &format!("{}x/duplicate-curve/run", served.url),
        Some("[1]"),
    );
    assert_eq!(status, 422, "{text}");
    let (status, _) = http::request("GET", &format!("{}x/no-such-thing", served.url), None);
    assert_eq!(status, 404);
}

#[test]
fn serves_a_readers_own_config_first_and_refuses_a_bad_one_at_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let own = dir.path().join("mine.toml");
    std::fs::write(&own, "name = \"mine\"\n[workload]\ntasks = 100\n[[tool]]\nname = \"t\"\nreply_loss = 0.2\n[[policy]]\nname = \"p\"\nmax_attempts = 3\n").unwrap();
    let served = Served::start(dir.path(), &["mine.toml"]);
    let (_, index) = http::request("GET", &served.url, None);
    let first = index.find("/x/mine").unwrap();
    assert!(first < index.find("/x/duplicate-curve").unwrap());
    let (status, ran) = post_run(&served, "mine", &["tool.t.reply_loss=0.3"]);
    assert_eq!(status, 200, "{ran}");
    drop(served);

    std::fs::write(
        &own,
        "name = \"mine\"\n[workload]\ntasks = 100\n[[tool]]\nname = \"t\"\nreply_los = 0.2\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_retrysim"))
        .args(["serve", "--port", "0", "mine.toml"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("mine.toml:6:1") && stderr.contains("reply_loss"),
        "{stderr}"
    );
}

/// Every loss slider of the duplicate curve's page runs at its start, its middle and its end:
/// the page offers only values the config takes.
#[test]
fn every_loss_sliders_start_middle_and_end_run() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::start(dir.path(), &[]);
    let (_, page) = http::request("GET", &format!("{}x/duplicate-curve", served.url), None);
    let sliders: Vec<(String, f64)> = page
        .split("<input type=\"range\" min=\"0\" max=\"")
        .skip(1)
        .filter_map(|rest| {
            let (max, rest) = rest.split_once('"')?;
            let path = rest.split("data-path=\"").nth(1)?.split('"').next()?;
            Some((path.to_string(), max.parse().ok()?))
        })
        .collect();
    assert!(!sliders.is_empty(), "{page}");
    for (path, max) in sliders {
        assert!(max < 0.5, "{path} offers {max}, where b reaches 0.5");
        for value in [0.0, max / 2.0, max] {
            let set = format!("{path}={value:.2}");
            let (status, ran) = post_run(
                &served,
                "duplicate-curve",
                &[&set, "replications=2", "workload.tasks=200"],
            );
            assert_eq!(status, 200, "{set}: {ran}");
        }
    }
}

/// The index lists the experiments in the book's order, under the chapter that first uses each.
#[test]
fn the_index_follows_the_book() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::start(dir.path(), &[]);
    let (_, index) = http::request("GET", &served.url, None);
    let at = |s: &str| index.find(s).unwrap_or_else(|| panic!("no {s} in {index}"));
    let order = [
        "<h2>Introduction</h2>",
        "/x/lost-reply\"",
        "/x/closed-forms\"",
        "<h2>A retry that charges twice</h2>",
        "/x/duplicate-curve\"",
        "<h2>Retry storms</h2>",
        "/x/retry-storm\"",
    ];
    let places: Vec<usize> = order.iter().map(|s| at(s)).collect();
    assert!(
        places.windows(2).all(|w| w[0] < w[1]),
        "{order:?} at {places:?}"
    );
}
