//! A Retry-After as real clients take it: honoured as a floor under the backoff (retrysim's
//! default), replacing the backoff exactly (urllib3, gRPC's server pushback), clamped (botocore),
//! and restarting the backoff's curve (gRPC), each seen in the gaps between one intent's
//! attempts; and a backoff of its own after a throttle (botocore).

use retrysim::metrics::{Status, StopReason};

use crate::common::{experiment, traced};

/// Exponential backoff from 100 ms, without jitter.
const SHORT: &str = "{ initial_delay = \"100ms\", jitter = \"none\" }";
/// Exponential backoff from 10 s, without jitter, capped at 60 s.
const LONG: &str = "{ initial_delay = \"10s\", jitter = \"none\", max_delay = \"60s\" }";

/// Two 5xx, a 429 asking for 1 s, another 5xx, then success, every answer 10 ms after its
/// dispatch, met by a policy with `backoff` and the Retry-After `rules`: the waits between one
/// attempt's end and the next one's dispatch, in milliseconds.
fn gaps(backoff: &str, rules: &str) -> Vec<u64> {
    gaps_of(
        "1s",
        &format!("max_attempts = 5\nbackoff = {backoff}\n{rules}"),
    )
}

/// The same script with the 429 asking for `asked`, met by the policy `body`.
fn gaps_of(asked: &str, body: &str) -> Vec<u64> {
    let exp = experiment(&format!(
        "name = \"p\"\n[workload]\ntasks = 1\n[[tool]]\nname = \"t\"\nscript = [\n\
         {{ outcome = \"5xx\", after = \"10ms\" }},\n{{ outcome = \"5xx\", after = \"10ms\" }},\n\
         {{ outcome = \"429\", after = \"10ms\", retry_after = \"{asked}\" }},\n\
         {{ outcome = \"5xx\", after = \"10ms\" }},\n{{ outcome = \"ok\", after = \"10ms\" }}]\n\
         [[policy]]\nname = \"p\"\n{body}\n"
    ));
    let (_, attempts) = &traced(&exp, 0)[0];
    assert_eq!(attempts.len(), 5);
    attempts
        .windows(2)
        .map(|w| (w[1].dispatch.0 - w[0].end.0) / 1000)
        .collect()
}

#[test]
fn a_retry_after_is_a_floor_a_replacement_a_clamp_or_a_restart() {
    // The default: at least what the server asked, so the backoff's 400 ms rises to 1 s.
    assert_eq!(gaps(SHORT, ""), [100, 200, 1000, 800]);
    // Ignored: the backoff alone.
    assert_eq!(
        gaps(SHORT, "retry_after = \"ignore\""),
        [100, 200, 400, 800]
    );
    // Replacing the backoff: exactly 1 s, and the curve goes on where it was.
    assert_eq!(
        gaps(SHORT, "retry_after = \"replace\""),
        [100, 200, 1000, 800]
    );
    // Where the backoff is longer, honouring keeps it and replacing takes the server's 1 s.
    assert_eq!(gaps(LONG, ""), [10_000, 20_000, 40_000, 60_000]);
    assert_eq!(
        gaps(LONG, "retry_after = \"replace\""),
        [10_000, 20_000, 1_000, 60_000]
    );
    // Clamped at 300 ms: the server's second is cut, under either rule.
    let clamp = "retry_after_max = \"300ms\"";
    assert_eq!(
        gaps(SHORT, &format!("retry_after = \"replace\"\n{clamp}")),
        [100, 200, 300, 800]
    );
    assert_eq!(gaps(SHORT, clamp), [100, 200, 400, 800]);
    // Restarting the curve after the pushback: the next 5xx waits 100 ms again, not 800.
    assert_eq!(
        gaps(
            SHORT,
            "retry_after = \"replace\"\nretry_after_resets = true"
        ),
        [100, 200, 1000, 100]
    );
    assert_eq!(
        gaps(LONG, "retry_after_resets = true"),
        [10_000, 20_000, 40_000, 10_000]
    );
}

/// urllib3 sleeps on a Retry-After only when it is truthy (`Retry.sleep_for_retry`): a
/// `Retry-After: 0` leaves the wait to the backoff, where `"replace"` waits exactly nothing.
#[test]
fn a_retry_after_of_zero_is_no_wait_given_for_urllib3() {
    let body = |rule: &str| {
        format!(
            "max_attempts = 5\nbackoff = {{ initial_delay = \"100ms\", jitter = \"none\" }}\n\
             retry_after = \"{rule}\""
        )
    };
    assert_eq!(gaps_of("0s", &body("replace")), [100, 200, 0, 800]);
    assert_eq!(
        gaps_of("0s", &body("replace_unless_zero")),
        [100, 200, 400, 800]
    );
    assert_eq!(
        gaps_of("1s", &body("replace_unless_zero")),
        [100, 200, 1000, 800]
    );
    // urllib3 itself, `Retry(total=4, backoff_factor=0.1, status_forcelist=[502, 503, 504])` on a GET:
    // 0 s first, then 0.1 · 2^(n−1) s; the zero Retry-After gets the third retry's 0.4 s.
    let urllib3 = "preset.urllib3 = { total = 4, backoff_factor = 0.1, status_forcelist = [502, 503, 504], \
                   method = \"GET\" }";
    assert_eq!(gaps_of("0s", urllib3), [0, 200, 400, 800]);
    assert_eq!(gaps_of("1s", urllib3), [0, 200, 1000, 800]);
}

/// botocore's current defaults back off from 1 s after a throttle and from 50 ms after other
/// failures: a 429 without Retry-After, then a 5xx, then success.
#[test]
fn a_throttle_can_have_a_backoff_of_its_own() {
    let exp = |throttle: &str| {
        experiment(&format!(
            "name = \"p\"\n[workload]\ntasks = 1\n[[tool]]\nname = \"t\"\nscript = [\n\
             {{ outcome = \"429\", after = \"10ms\" }},\n{{ outcome = \"5xx\", after = \"10ms\" }},\n\
             {{ outcome = \"ok\", after = \"10ms\" }}]\n[[policy]]\nname = \"p\"\nmax_attempts = 3\n\
             backoff = {{ initial_delay = \"50ms\", jitter = \"none\" }}\n{throttle}\n"
        ))
    };
    let gaps = |throttle: &str| -> Vec<u64> {
        let (_, attempts) = &traced(&exp(throttle), 0)[0];
        (attempts.windows(2))
            .map(|w| (w[1].dispatch.0 - w[0].end.0) / 1000)
            .collect()
    };
    assert_eq!(gaps(""), [50, 100]);
    assert_eq!(
        gaps("throttle_backoff = { initial_delay = \"1s\", jitter = \"none\" }"),
        [1000, 100]
    );
}

/// The AWS SDKs keep a Retry-After within [backoff, backoff + 5 s]: the server's 1 s over the
/// 200 ms backoff is cut to 200 + 300 ms by a 300 ms bound, and a wait under the backoff is
/// still raised to it.
#[test]
fn a_retry_after_can_be_bounded_over_the_backoff() {
    let over = "retry_after_over_backoff = \"300ms\"";
    assert_eq!(gaps(SHORT, over), [100, 200, 700, 800]);
    assert_eq!(gaps(LONG, over), [10_000, 20_000, 40_000, 60_000]);
}

/// urllib3 retries a 429 or 503 that carries Retry-After whatever its status list says, and
/// only those: a 429 naming a wait is retried under `retry_on = ["5xx"]` with
/// `retry_after_retries`, and one naming none is not.
#[test]
fn a_refusal_that_names_a_wait_can_be_retried_for_it() {
    let story = |retry_after: &str, rules: &str| {
        let exp = experiment(&format!(
            "name = \"p\"\n[workload]\ntasks = 1\n[[tool]]\nname = \"t\"\nscript = [\n\
             {{ outcome = \"429\", after = \"10ms\"{retry_after} }},\n\
             {{ outcome = \"ok\", after = \"10ms\" }}]\n[[policy]]\nname = \"p\"\n\
             max_attempts = 3\nretry_on = [\"5xx\"]\n{rules}\n"
        ));
        let (record, attempts) = traced(&exp, 0).remove(0);
        (record.status, attempts.len())
    };
    let named = ", retry_after = \"1s\"";
    let retries = "retry_after = \"replace\"\nretry_after_retries = true";
    assert_eq!(story(named, retries), (Status::Succeeded, 2));
    assert_eq!(
        story("", retries),
        (Status::Stopped(StopReason::NotRetryable), 1)
    );
    assert_eq!(
        story(named, ""),
        (Status::Stopped(StopReason::NotRetryable), 1)
    );
}

/// A 429 with a pushback of 0 ms, then success, met by the gRPC preset of `implementation`
/// (`timeout` the call's deadline, where given): the intent's record.
fn zero_pushback(implementation: &str, timeout: &str) -> retrysim::metrics::IntentRecord {
    let timeout = match timeout {
        "" => String::new(),
        t => format!(", \"timeout\": \"{t}\""),
    };
    let exp = experiment(&format!(
        "name = \"g\"\n[workload]\ntasks = 1\n[[tool]]\nname = \"t\"\nscript = [\n\
         {{ outcome = \"429\", after = \"10ms\", retry_after = \"0s\" }},\n\
         {{ outcome = \"ok\", after = \"10ms\" }}]\n\
         [[policy]]\nname = \"g\"\npreset.grpc = {{ implementation = \"{implementation}\", \
         service_config = '{{ \"methodConfig\": [{{ \"retryPolicy\": {{ \"maxAttempts\": 3, \
         \"initialBackoff\": \"0.1s\", \"maxBackoff\": \"1s\", \"backoffMultiplier\": 2, \
         \"retryableStatusCodes\": [\"RESOURCE_EXHAUSTED\"] }}{timeout} }}] }}' }}\n"
    ));
    traced(&exp, 0)[0].0
}

/// gRPC's C core (grpcio), measured: a server pushback of 0 ms is not retried, and the call
/// waits for its deadline; the other implementations retry at once, as A6 says.
#[test]
fn grpc_core_holds_a_zero_pushback_until_the_deadline() {
    let java = zero_pushback("java", "5s");
    assert_eq!((java.attempts, java.status), (2, Status::Succeeded));
    assert_eq!(java.end.0 - java.start.0, 20_000, "retried at once");
    let core = zero_pushback("core", "5s");
    assert_eq!(core.attempts, 1);
    assert_eq!(core.status, Status::Stopped(StopReason::DeadlineExceeded));
    assert_eq!(
        core.end.0 - core.start.0,
        5_000_000,
        "ended at the deadline"
    );
    // Without a deadline the call waits for ever: the run ends it hung.
    let forever = zero_pushback("core", "");
    assert_eq!(forever.attempts, 1);
    assert_eq!(forever.status, Status::Stopped(StopReason::Hung));
}
