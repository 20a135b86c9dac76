//! `retrysim serve`: a classroom page on this machine. `/` lists the experiments; `/x/<id>` is
//! one experiment with controls for its main keys; each change is posted to `/x/<id>/run`, which
//! checks the config with the changes as `--set` flags (the same checks, the same located errors)
//! and runs it, answering with its charts and the table `retrysim run` prints. Every asset is
//! compiled in: the page needs no network.
//!
//! One run at a time, each in a `retrysim run` process of its own, so that the server stays
//! free to answer while it goes on and can stop it whatever it is doing: a reader who posts
//! while another's run is under way is told to wait (503); a run is stopped when it passes
//! [`RUN_TIME`], when its reader goes away, or when the server stops (Ctrl-C or SIGTERM, which
//! also remove the server's scratch folder). A run may make at most the calls the experiment's
//! own config makes, or [`TEACHING_CALLS`] where that is more, so every shipped experiment runs
//! at its own size and no page can post a run that holds the machine.
mod catalog;
mod controls;
mod course;
mod http;
mod page;

use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use retrysim::Error;
use retrysim::config::Change;
use serde::Serialize;

use crate::args::ServeArgs;
use crate::{CANCEL, Failure, catch_ctrl_c_to_stop, print};
use catalog::{Catalog, Experiment};

const SCRIPT: &str = include_str!("assets/serve.js");
const STYLE: &str = include_str!("assets/serve.css");

/// The longest a page's run may take before it is stopped.
pub const RUN_TIME: Duration = Duration::from_secs(120);
/// The calls a page's run may make where the experiment's own config makes fewer: room to
/// raise its tasks or replications for a closer look.
pub const TEACHING_CALLS: u64 = 2_000_000;

/// What the connections share: the experiments, where runs go, and the one run slot.
struct Shared {
    catalog: Catalog,
    runs: PathBuf,
    threads: Option<u16>,
    /// Held while a run goes on: one at a time, each using every core.
    running: Mutex<()>,
    /// Numbers each run's folder.
    next: AtomicU64,
    /// Connections open now, each with a handle the server can close when it stops.
    open: Mutex<Vec<(u64, TcpStream)>>,
}

pub fn command(args: &ServeArgs) -> Result<(), Failure> {
    // The server's own scratch folder: the experiments' configs and latency files, and each
    // run's output while it is read; removed when the server stops.
    let scratch = tempfile::Builder::new()
        .prefix("retrysim-serve-")
        .tempdir()
        .map_err(Error::io("cannot make a scratch folder for the server"))?;
    let catalog = Catalog::new(args.config.as_deref(), scratch.path())?;
    let listener = TcpListener::bind(SocketAddr::new(args.bind, args.port))
        .map_err(|e| Failure::Usage(bind_error(args, &e)))?;
    listener
        .set_nonblocking(true)
        .map_err(Error::io("cannot listen"))?;
    let port = listener.local_addr().map_or(args.port, |a| a.port());
    let host = match args.bind {
        IpAddr::V6(ip) => format!("[{ip}]"),
        IpAddr::V4(ip) => ip.to_string(),
    };
    print(&format!(
        "serving {} experiments at http://{host}:{port}/ (Ctrl-C stops)\n",
        catalog.experiments.len()
    ))?;
    catch_ctrl_c_to_stop();
    let shared = Shared {
        catalog,
        runs: scratch.path().join("runs"),
        threads: args.threads,
        running: Mutex::new(()),
        next: AtomicU64::new(0),
        open: Mutex::new(Vec::new()),
    };
    std::thread::scope(|scope| {
        let mut id = 0;
        while !CANCEL.load(Ordering::SeqCst) {
            let stream = match listener.accept() {
                Ok((stream, _)) => stream,
                Err(_) => {
                    // Nothing waiting (or no descriptor to take one with): look again shortly.
                    std::thread::sleep(Duration::from_millis(20));
                    continue;
                }
            };
            id += 1;
            let _ = stream.set_nonblocking(false);
            let Some(stream) = shared.admit(id, stream) else {
                continue;
            };
            let shared = &shared;
            scope.spawn(move || {
                // The connection leaves the count however its answer ends, a panic included.
                let _leaving = Leaving(shared, id);
                let mut stream = stream;
                let _ = answer(&mut stream, shared);
            });
        }
        // Stopping: every connection is closed, so a thread reading a half-sent request ends
        // now, and a run's thread sees CANCEL and stops its run.
        let open = shared.open.lock().unwrap_or_else(PoisonError::into_inner);
        for (_, stream) in open.iter() {
            let _ = stream.shutdown(Shutdown::Both);
        }
    });
    Ok(())
}

fn bind_error(args: &ServeArgs, e: &std::io::Error) -> String {
    let at = format!("{}:{}", args.bind, args.port);
    match e.kind() {
        std::io::ErrorKind::AddrInUse => format!(
            "cannot listen on {at}: another server holds the port; `--port 0` takes any free one"
        ),
        std::io::ErrorKind::AddrNotAvailable => format!(
            "cannot listen on {at}: {} is no address of this machine; 127.0.0.1 serves this \
             machine alone, 0.0.0.0 every address it has",
            args.bind
        ),
        _ => format!("cannot listen on {at}: {e}"),
    }
}

/// Takes connection `.1` out of the server's count when dropped.
struct Leaving<'a>(&'a Shared, u64);

impl Drop for Leaving<'_> {
    fn drop(&mut self) {
        self.0.leave(self.1);
    }
}

impl Shared {
    /// Takes a connection in, or tells it the server is full and closes it.
    fn admit(&self, id: u64, mut stream: TcpStream) -> Option<TcpStream> {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if open.len() >= http::MOST_CONNECTIONS {
            drop(open);
            let body = refusal("the server has as many readers as it takes; try again shortly");
            let _ = http::respond(&mut stream, 503, JSON, &body, Duration::from_secs(1));
            return None;
        }
        open.push((id, stream.try_clone().ok()?));
        Some(stream)
    }

    fn leave(&self, id: u64) {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        open.retain(|(i, _)| *i != id);
    }
}

const JSON: &str = "application/json";
const HTML: &str = "text/html; charset=utf-8";

/// Reads one request and answers it.
fn answer(stream: &mut TcpStream, shared: &Shared) -> std::io::Result<()> {
    let request = match http::read(stream) {
        Ok(request) => request,
        Err(http::Unread::Answer(status, why)) => {
            return http::respond(stream, status, JSON, &refusal(why), http::READ_TIME);
        }
        Err(http::Unread::Silent) => return Ok(()),
    };
    let path = request.path.clone();
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let catalog = &shared.catalog;
    let (status, kind, body) = match (request.method.as_str(), parts.as_slice()) {
        ("GET", [""]) => (200, HTML, page::index(catalog).into_bytes()),
        ("GET", ["assets", "serve.js"]) => (
            200,
            "text/javascript; charset=utf-8",
            SCRIPT.as_bytes().to_vec(),
        ),
        ("GET", ["assets", "serve.css"]) => {
            (200, "text/css; charset=utf-8", STYLE.as_bytes().to_vec())
        }
        ("GET", ["x", id]) => match catalog.find(id) {
            Some(e) => (200, HTML, page::experiment(e).into_bytes()),
            None => (404, HTML, page::not_found(&path).into_bytes()),
        },
        ("POST", ["x", id, "run"]) => match catalog.find(id) {
            Some(e) => {
                let ran = Change::posted(&request.body)
                    .map_err(|why| (422, refused(why)))
                    .and_then(|changes| run_page(e, &changes, shared, stream));
                let (status, ran) = match ran {
                    Ok(done) => (200, done),
                    Err((_, Ran::Gone)) => return Ok(()),
                    Err(refused) => refused,
                };
                let text = serde_json::to_string(&ran).unwrap_or_else(|_| "{}".into());
                (status, JSON, text.into_bytes())
            }
            None => (404, HTML, page::not_found(&path).into_bytes()),
        },
        _ => (404, HTML, page::not_found(&path).into_bytes()),
    };
    http::respond(stream, status, kind, &body, http::READ_TIME)
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
    /// The reader went away: there is no one to answer.
    #[serde(skip)]
    Gone,
}

#[derive(Serialize)]
struct Chart {
    name: String,
    svg: String,
}

fn refused(error: String) -> Ran {
    Ran::Refused {
        error: format!("error: {error}"),
    }
}

/// A refusal as the page reads one, as JSON.
fn refusal(why: &str) -> Vec<u8> {
    serde_json::to_vec(&refused(why.to_string())).unwrap_or_default()
}

/// Checks the experiment with the page's changes, then runs it in a `retrysim run` of its own
/// into the scratch folder, reads its charts and table, and removes the folder.
fn run_page(
    e: &Experiment,
    changes: &[Change],
    shared: &Shared,
    reader: &TcpStream,
) -> Result<Ran, (u16, Ran)> {
    let sweep = (e.source.changed(changes)).map_err(|err| (422, refused(err.to_string())))?;
    let calls = sweep.most_calls();
    let most = e.most_calls().max(TEACHING_CALLS);
    if calls > most {
        return Err((
            422,
            refused(format!(
                "this run could make up to {calls} calls, more than the {most} a run on this page \
                 may make (the experiment's own size, or {TEACHING_CALLS}); fewer tasks or \
                 replications, or `retrysim run` on the command line for a run of any size"
            )),
        ));
    }
    // A run that panicked has ended: its poisoned slot is free.
    let slot = match shared.running.try_lock() {
        Ok(slot) => Some(slot),
        Err(std::sync::TryLockError::Poisoned(p)) => Some(p.into_inner()),
        Err(std::sync::TryLockError::WouldBlock) => None,
    };
    let Some(_slot) = slot else {
        return Err((
            503,
            refused(format!(
                "another reader's run is under way, and the server runs one at a time; try again \
                 when it ends (a run takes at most {} s)",
                RUN_TIME.as_secs()
            )),
        ));
    };
    let out = shared
        .runs
        .join(shared.next.fetch_add(1, Ordering::SeqCst).to_string());
    let ran = run_child(e, changes, shared.threads, &out, reader);
    let ran = ran.and_then(|(table, seconds)| {
        let charts = charts(&out.join(&sweep.base.name).join("charts"), e)
            .map_err(|err| (422, refused(err)))?;
        Ok(Ran::Done {
            name: sweep.base.name.clone(),
            table,
            charts,
            seconds,
        })
    });
    let _ = std::fs::remove_dir_all(&out);
    ran
}

/// Runs `retrysim run` on the experiment's config with `changes` into `out`, stopping it when it
/// passes [`RUN_TIME`], when the reader goes away or when the server stops: what it printed and
/// its seconds.
fn run_child(
    e: &Experiment,
    changes: &[Change],
    threads: Option<u16>,
    out: &Path,
    reader: &TcpStream,
) -> Result<(String, f64), (u16, Ran)> {
    let failed = |why: String| (422, refused(why));
    let exe = std::env::current_exe()
        .map_err(|err| failed(format!("cannot find retrysim's own program: {err}")))?;
    let mut command = Command::new(exe);
    command.arg("run").arg(&e.path).arg("--out").arg(out);
    command.args(["--progress", "none"]);
    for change in changes {
        if let Change::Set(text) = change {
            command.arg("--set").arg(text);
        }
    }
    if let Some(n) = threads {
        command.arg("--threads").arg(n.to_string());
    }
    let started = Instant::now();
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|err| failed(format!("cannot start a run: {err}")))?;
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    std::thread::scope(|scope| {
        let printed = scope.spawn(|| drain(stdout));
        let said = scope.spawn(|| drain(stderr));
        let stopped = watch(&mut child, started, reader);
        let (printed, said) = (
            printed.join().unwrap_or_default(),
            said.join().unwrap_or_default(),
        );
        match stopped {
            Some(ran) => Err(ran),
            None if child.wait().is_ok_and(|s| s.success()) => {
                Ok((table(&printed), started.elapsed().as_secs_f64()))
            }
            None => Err(failed(
                said.trim_end().trim_start_matches("error: ").to_string(),
            )),
        }
    })
}

/// Waits for `child` to end; stops it, and says why, where it passes [`RUN_TIME`], its reader
/// goes away or the server stops.
fn watch(child: &mut Child, started: Instant, reader: &TcpStream) -> Option<(u16, Ran)> {
    loop {
        if let Ok(Some(_)) = child.try_wait() {
            return None;
        }
        let why = if CANCEL.load(Ordering::SeqCst) {
            Some((503, refused("the server is stopping".into())))
        } else if http::gone(reader) {
            Some((499, Ran::Gone))
        } else if started.elapsed() > RUN_TIME {
            Some((
                503,
                refused(format!(
                    "the run passed the {} s a run on this page may take, and was stopped; fewer \
                     tasks or replications",
                    RUN_TIME.as_secs()
                )),
            ))
        } else {
            None
        };
        if let Some(why) = why {
            let _ = child.kill();
            let _ = child.wait();
            return Some(why);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn drain(pipe: Option<impl std::io::Read>) -> String {
    let mut text = String::new();
    if let Some(mut pipe) = pipe {
        let _ = pipe.read_to_string(&mut text);
    }
    text
}

/// What `retrysim run` printed, less the line that says where it wrote: the scratch folder is
/// no reader's.
fn table(printed: &str) -> String {
    let kept: Vec<&str> = printed
        .lines()
        .filter(|l| !l.starts_with("wrote "))
        .collect();
    format!("{}\n", kept.join("\n").trim_end())
}

/// The run's charts, in the order the config lists them: its first chart is the one it is about.
fn charts(folder: &Path, e: &Experiment) -> Result<Vec<Chart>, String> {
    let mut charts = Vec::new();
    if let Ok(entries) = std::fs::read_dir(folder) {
        let mut files: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
        files.sort();
        for file in files
            .iter()
            .filter(|f| f.extension().is_some_and(|x| x == "svg"))
        {
            let svg = std::fs::read_to_string(file)
                .map_err(|err| format!("cannot read {}: {err}", file.display()))?;
            let name = file.file_stem().map(|s| s.to_string_lossy().into_owned());
            charts.push(Chart {
                name: name.unwrap_or_default(),
                svg,
            });
        }
    }
    charts.sort_by_key(|c| {
        e.charts
            .iter()
            .position(|n| *n == c.name)
            .unwrap_or(usize::MAX)
    });
    Ok(charts)
}
