//! `retrysim serve`: a classroom page on this machine. `/` lists the experiments; `/x/<id>` is
//! one experiment with controls for its main keys; each change is posted to `/x/<id>/run`, which
//! runs the config with the changes as `--set` flags (the same checks, the same located errors)
//! and answers with its charts and the table `retrysim run` prints. Every asset is compiled in:
//! the page needs no network. A sync server (tiny_http) is enough: one classroom, one machine,
//! and a run uses every core while it lasts.

mod catalog;
mod controls;
mod page;

use std::io::Read;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use retrysim::config::Change;
use retrysim::{Error, produce, report, run};
use serde::Serialize;
use tiny_http::{Header, Method, Request, Response, Server};

use crate::args::ServeArgs;
use crate::{CANCEL, Failure, catch_ctrl_c, print};
use catalog::{Catalog, Experiment};

const SCRIPT: &str = include_str!("assets/serve.js");
const STYLE: &str = include_str!("assets/serve.css");
/// The most a run request may carry: a page sends a few dozen short flags.
const MAX_BODY: u64 = 64 * 1024;

pub fn command(args: &ServeArgs) -> Result<(), Failure> {
    // The server's own scratch folder: the shipped configs' latency files and each run's
    // output while it is read, removed when the server stops.
    let scratch = tempfile::Builder::new()
        .prefix("retrysim-serve-")
        .tempdir()
        .map_err(Error::io("cannot make a scratch folder for the server"))?;
    let catalog = Catalog::new(args.config.as_deref(), scratch.path())?;
    let server = Server::http(SocketAddr::new(args.bind, args.port)).map_err(|e| {
        Failure::Usage(format!(
            "cannot listen on {}:{}: {e}; is another server on that port? `--port 0` takes any free one",
            args.bind, args.port
        ))
    })?;
    let port = server.server_addr().to_ip().map_or(args.port, |a| a.port());
    let host = match args.bind {
        IpAddr::V6(ip) => format!("[{ip}]"),
        IpAddr::V4(ip) => ip.to_string(),
    };
    print(&format!(
        "serving {} experiments at http://{host}:{port}/ (Ctrl-C stops)\n",
        catalog.experiments.len()
    ))?;
    catch_ctrl_c();
    let runs = scratch.path().join("runs");
    let threads = args.threads.map(usize::from);
    while !CANCEL.load(Ordering::SeqCst) {
        let request = match server.recv_timeout(Duration::from_millis(200)) {
            Ok(Some(request)) => request,
            Ok(None) => continue,
            Err(e) => return Err(Error::io("the server stopped")(e).into()),
        };
        // A reader who closed the page before the answer came is no failure of the server's.
        let _ = answer(request, &catalog, &runs, threads);
    }
    Ok(())
}

/// Routes one request and answers it.
fn answer(
    mut request: Request,
    catalog: &Catalog,
    runs: &Path,
    threads: Option<usize>,
) -> std::io::Result<()> {
    let path = request.url().split('?').next().unwrap_or("/").to_string();
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let method = request.method().clone();
    let response = match (&method, parts.as_slice()) {
        (Method::Get, [""]) => html(200, page::index(catalog)),
        (Method::Get, ["assets", "serve.js"]) => {
            typed(200, SCRIPT, "text/javascript; charset=utf-8")
        }
        (Method::Get, ["assets", "serve.css"]) => typed(200, STYLE, "text/css; charset=utf-8"),
        (Method::Get, ["x", id]) => match catalog.find(id) {
            Some(e) => html(200, page::experiment(e)),
            None => html(404, page::not_found(&path)),
        },
        (Method::Post, ["x", id, "run"]) => match catalog.find(id) {
            Some(e) => {
                let ran = read_changes(&mut request)
                    .and_then(|changes| run_page(e, &changes, runs, threads));
                json(&ran)
            }
            None => html(404, page::not_found(&path)),
        },
        _ => html(404, page::not_found(&path)),
    };
    request.respond(response)
}

/// What a run answers: its charts and table, or the error the command line would print.
#[derive(Serialize)]
#[serde(untagged)]
enum Ran {
    Done {
        name: String,
        table: String,
        charts: Vec<Chart>,
        seconds: f64,
    },
    Refused {
        error: String,
    },
}

#[derive(Serialize)]
struct Chart {
    name: String,
    svg: String,
}

/// The changes a page posts (see [`Change::posted`]), from a body of at most 64 KiB.
fn read_changes(request: &mut Request) -> Result<Vec<Change>, Ran> {
    let mut body = Vec::new();
    let read = request
        .as_reader()
        .take(MAX_BODY + 1)
        .read_to_end(&mut body);
    if read.is_err() || body.len() as u64 > MAX_BODY {
        return Err(refused("the request is larger than 64 KiB".into()));
    }
    Change::posted(&body).map_err(refused)
}

fn refused(error: String) -> Ran {
    Ran::Refused {
        error: format!("error: {error}"),
    }
}

/// Runs the experiment with the page's changes into the scratch folder, reads its charts, and
/// lets the folder go.
fn run_page(
    e: &Experiment,
    changes: &[Change],
    runs: &Path,
    threads: Option<usize>,
) -> Result<Ran, Ran> {
    let failed = |e: Error| refused(e.to_string());
    let sweep = e
        .source
        .changed(changes)
        .map_err(|e| failed(Error::Config(e)))?;
    let name = sweep.base.name.clone();
    let options = run::Options {
        threads,
        traces: None,
        cancel: None,
    };
    let started = Instant::now();
    let (results, staging) =
        produce::into_staging(&e.source, sweep, runs, &options, &mut ()).map_err(failed)?;
    let seconds = started.elapsed().as_secs_f64();
    let mut charts = Vec::new();
    if let Ok(entries) = std::fs::read_dir(staging.path().join("charts")) {
        let mut files: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
        files.sort();
        for file in files
            .iter()
            .filter(|f| f.extension().is_some_and(|x| x == "svg"))
        {
            let svg = std::fs::read_to_string(file)
                .map_err(|err| failed(Error::io(format!("cannot read {}", file.display()))(err)))?;
            let name = file.file_stem().map(|s| s.to_string_lossy().into_owned());
            charts.push(Chart {
                name: name.unwrap_or_default(),
                svg,
            });
        }
    }
    // In the order the config lists them: its first chart is the one it is about.
    charts.sort_by_key(|c| {
        e.charts
            .iter()
            .position(|n| *n == c.name)
            .unwrap_or(usize::MAX)
    });
    Ok(Ran::Done {
        name,
        table: report::table(&results),
        charts,
        seconds,
    })
}

fn json(ran: &Result<Ran, Ran>) -> Response<std::io::Cursor<Vec<u8>>> {
    let (status, body) = match ran {
        Ok(done) => (200, done),
        Err(refused) => (422, refused),
    };
    let text = serde_json::to_string(body).unwrap_or_else(|_| "{}".into());
    typed(status, &text, "application/json")
}

fn html(status: u16, text: String) -> Response<std::io::Cursor<Vec<u8>>> {
    typed(status, &text, "text/html; charset=utf-8")
}

fn typed(status: u16, text: &str, content_type: &str) -> Response<std::io::Cursor<Vec<u8>>> {
    let header = Header::from_bytes("Content-Type", content_type).expect("a valid header");
    Response::from_data(text.as_bytes().to_vec())
        .with_status_code(status)
        .with_header(header)
}
