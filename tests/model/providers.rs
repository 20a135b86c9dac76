//! Model providers: what each attempt is billed, recomputed from the trace; broken streams
//! started over and resumed, against their closed forms; an overloaded provider; and the
//! tokens-per-minute experiment's order of 429s.

use retrysim::metrics::{Measure, Moments, Outcome, Sample, Status};
use retrysim::model::FailureClass;
use retrysim::model::provider::BrokenStream;

use crate::common::{experiment, run_one, shipped, traced};

/// A model of constant sizes: `input` tokens in, `output` out at `rate` a second after a first
/// token in 200 ms, 10 ms each way, $3 / $15 a million, with `extra` tool keys and `policy`.
fn model(input: u32, output: u32, rate: f64, extra: &str, policy: &str) -> String {
    format!(
        "name = \"m\"\nseed = 11\nreplications = 1\nhorizon = \"10h\"\n\
         [workload]\ntasks = 3000\n\
         [[tool]]\nname = \"llm\"\nkind = \"model\"\n\
         request_latency = {{ dist = \"constant\", value = \"10ms\" }}\n\
         reply_latency = {{ dist = \"constant\", value = \"10ms\" }}\n\
         model = {{ input_tokens = {{ dist = \"constant\", value = {input} }}, \
         output_tokens = {{ dist = \"constant\", value = {output} }}, max_tokens = 4096, \
         first_token = {{ dist = \"constant\", value = \"200ms\" }}, tokens_per_second = {rate} }}\n\
         price = {{ input_per_million = 3, output_per_million = 15 }}\n{extra}\n\
         [[policy]]\nname = \"p\"\n{policy}\n"
    )
}

/// Picodollars for `input` and `output` tokens at $3 and $15 a million.
fn price(input: u128, output: u128) -> u128 {
    input * 3_000_000 + output * 15_000_000
}

/// Every attempt that reached the model (a reply, a reply lost after the work, a 5xx sent after
/// it) pays its whole prompt and answer; a 429, a 503, a 5xx before the work and a lost request
/// pay nothing. The bill of each
/// intent, its retries' part (every billed attempt after the first billed one) and its wasted
/// part (every billed attempt but the one whose answer was used) are recomputed from the trace.
#[test]
fn each_attempt_that_reached_the_model_is_billed_and_no_other() {
    let exp = experiment(&model(
        1_000,
        200,
        100.0,
        "reply_loss = 0.2\nthrottled = 0.15\noverloaded = 0.1\nrequest_loss = 0.05\n\
         server_error = 0.1\nerror_after_commit = 0.05",
        "max_attempts = 8",
    ));
    let one = price(1_000, 200);
    let (mut checked, mut free, mut fives) = (0, 0, 0);
    for (record, attempts) in traced(&exp, 0) {
        let billed = attempts
            .iter()
            .filter(|a| {
                matches!(
                    a.outcome,
                    Outcome::Ok | Outcome::LostReply | Outcome::ServerErrorAfterCommit
                )
            })
            .count() as u128;
        free += attempts.len() as u128 - billed;
        fives += (attempts.iter())
            .filter(|a| a.outcome == Outcome::ServerError)
            .count();
        let used = u128::from(record.status == Status::Succeeded);
        assert_eq!(record.bill.cost, billed * one, "{record:?}");
        assert_eq!(record.bill.retries, billed.saturating_sub(1) * one);
        assert_eq!(record.bill.wasted, (billed - used) * one);
        assert_eq!(
            (record.bill.input_tokens, record.bill.output_tokens),
            (billed * 1_000, billed * 200)
        );
        checked += 1;
    }
    assert_eq!(checked, 3_000);
    assert!(free > 1_000, "only {free} attempts went unbilled");
    assert!(fives > 200, "only {fives} 5xx before the work");
}

/// An overloaded provider (529 / 503) refuses a share p of attempts before any work: the share
/// of 503s lies in its binomial 99.9 % interval, and none of them is billed.
#[test]
fn an_overloaded_provider_refuses_its_share_and_bills_nothing() {
    let exp = experiment(&model(
        500,
        100,
        100.0,
        "overloaded = 0.3",
        "max_attempts = 20",
    ));
    let result = run_one(exp);
    let tool = result.policies[0].tool_totals(0);
    let overloaded = Outcome::Refused(FailureClass::Overloaded).index();
    let share = tool.outcomes[overloaded] as f64 / tool.calls as f64;
    let se = (0.3 * 0.7 / tool.calls as f64).sqrt();
    assert!((share - 0.3).abs() < 3.29 * se, "{share}");
    let ok = tool.outcomes[Outcome::Ok.index()];
    assert_eq!(ok, 3_000);
    assert_eq!(tool.bill.cost, u128::from(ok) * price(500, 100));
}

/// A break written per token: with a chance p = 0.0005 that a token is the last before a cut,
/// an answer of n = 1 000 tokens arrives whole with (1 − p)ⁿ = 0.606, whatever the decode rate.
/// Unretried, the share of broken answers lies in its binomial 99.9 % interval around
/// 1 − (1 − p)ⁿ, at 100 and at 25 tokens a second.
#[test]
fn a_break_per_token_cuts_an_answer_of_n_tokens_with_one_minus_q_to_the_n() {
    let (p, n): (f64, i32) = (0.0005, 1_000);
    let broken = 1.0 - (1.0 - p).powi(n);
    for rate in [100.0, 25.0] {
        let toml = model(500, n as u32, rate, "", "");
        let written = format!("tokens_per_second = {rate} }}");
        assert!(toml.contains(&written));
        let toml = toml.replace(
            &written,
            &format!("tokens_per_second = {rate}, stream_break_per_token = {p} }}"),
        );
        let tool = run_one(experiment(&toml)).policies[0].tool_totals(0);
        let share = tool.outcomes[Outcome::StreamBroken.index()] as f64 / tool.calls as f64;
        let se = (broken * (1.0 - broken) / tool.calls as f64).sqrt();
        assert_eq!(tool.calls, 3_000);
        assert!(
            (share - broken).abs() < 3.29 * se,
            "{share} against {broken}"
        );
    }
}

/// A call's answer streams for D = 10 s and breaks at λ = 0.1 a second of streaming (λD = 1).
/// Started over: e attempts, (e^λD − 1)/λ seconds streamed and that many seconds' tokens
/// billed; resumed: 1 + λD attempts, the answer generated exactly once, and the received
/// tokens sent back, λD/2 answers' worth on average. Each mean is held to its 99.9 % interval
/// around the closed form (with, for tokens, the one token a break may round away), and the
/// completion time to attempts × (first token + network) + time streamed.
#[test]
fn broken_streams_cost_what_their_closed_forms_say() {
    let (input, output, rate, breaks) = (1_000u32, 1_000u32, 100.0, 0.1);
    let seconds = f64::from(output) / rate;
    let config = |policy: &str| {
        model(
            input,
            output,
            rate,
            "",
            &format!("max_attempts = 100\nretry_on = [\"stream_broken\"]\n{policy}"),
        )
        .replace(
            "tokens_per_second = 100 }",
            &format!("tokens_per_second = 100, stream_break = {breaks} }}"),
        )
    };
    for (policy, theory) in [
        ("", BrokenStream::from_scratch(breaks, seconds, None)),
        ("resume = true", BrokenStream::resumed(breaks, seconds)),
    ] {
        let exp = experiment(&config(policy));
        let traces = traced(&exp, 0);
        let z = 3.29;
        let mean = |xs: &mut dyn Iterator<Item = f64>| xs.collect::<Moments>();
        let held = |m: Moments, expected: f64, slack: f64, what: &str| {
            let half = z * (m.variance() / m.count() as f64).sqrt() + slack;
            assert!(
                (m.mean() - expected).abs() <= half,
                "{policy:?} {what}: {} ± {half} against {expected}",
                m.mean()
            );
        };
        assert!(traces.iter().all(|(r, _)| r.status == Status::Succeeded));
        let attempts = mean(&mut traces.iter().map(|(r, _)| f64::from(r.attempts)));
        held(attempts, theory.attempts, 0.0, "attempts");
        let cuts = theory.attempts - 1.0;
        let out = mean(&mut traces.iter().map(|(r, _)| r.bill.output_tokens as f64));
        held(
            out,
            theory.output_share * f64::from(output),
            cuts,
            "output tokens",
        );
        let inp = mean(&mut traces.iter().map(|(r, _)| r.bill.input_tokens as f64));
        let expected_in = theory.prompts * f64::from(input) + theory.resent * f64::from(output);
        held(inp, expected_in, cuts, "input tokens");
        // Time: each attempt pays 200 ms to its first token and 20 ms of network.
        let time = mean(&mut traces.iter().map(|(r, _)| r.end.since(r.start).seconds()));
        held(
            time,
            theory.attempts * 0.22 + theory.streaming,
            1e-3,
            "completion",
        );
        if policy == "resume = true" {
            // Resumed, the answer is generated exactly once, however often it broke.
            assert!(
                traces
                    .iter()
                    .all(|(r, _)| r.bill.output_tokens == u128::from(output))
            );
        }
    }
}

/// The shipped tokens-per-minute experiment: a client-side bucket of the key's tokens meets
/// the fewest 429s, waiting for the reset fewer than honouring the Retry-After, and honouring
/// it fewer than ignoring it; waiting for a full bucket makes the longest waits of the three
/// that read the 429.
#[test]
fn a_client_side_token_bucket_meets_the_fewest_429s() {
    let exp = shipped("tokens-per-minute.toml");
    let result = run_one(exp);
    let throttled = Outcome::Refused(FailureClass::Throttled).index();
    let by_policy: Vec<u64> = (result.policies.iter())
        .map(|p| p.all_tools().outcomes[throttled])
        .collect();
    let [ignore, honour, client, reset] = by_policy[..] else {
        panic!("four configurations")
    };
    assert!(
        client < reset && reset < honour && honour < ignore,
        "{by_policy:?}"
    );
    let time = |i: usize| result.policies[i].estimate(Measure::Completion);
    let (honoured, awaited) = (time(1), time(3));
    assert!(
        awaited.mean - awaited.half_width > honoured.mean + honoured.half_width,
        "{awaited:?} against {honoured:?}"
    );
    assert!(ignore > 1_000, "the limit must bite: {by_policy:?}");
    // Every configuration is billed for its tokens and nothing for its 429s; the calls the
    // client-side bucket holds back wait rather than fail.
    for p in &result.policies {
        let tokens = p.all_tools().bill;
        let expected = tokens.input_tokens * 2_500_000 + tokens.output_tokens * 10_000_000;
        assert_eq!(tokens.cost, expected);
    }
    let success = |i: usize| result.policies[i].estimate(Measure::Success).mean;
    assert!(success(2) > success(1) && success(2) > success(0));
}

/// An agent loop of 3 turns over [model, tool]: the model's calls read 100 tokens of their own
/// and the context, each earlier answer (50) and tool result (20) — 100, 170 and 240 tokens —
/// and the last turn is the model's alone: 5 calls a task, billed exactly that.
#[test]
fn an_agent_loops_context_grows_with_its_turns() {
    let exp = experiment(
        &model(100, 50, 100.0, "", "")
            .replace("[workload]\ntasks = 3000\n", "[workload]\ntasks = 200\ncalls = [\"llm\", \"t\"]\nagent = { turns = { dist = \"constant\", value = 3 }, result_tokens = 20 }\n")
            .replace("[[policy]]", "[[tool]]\nname = \"t\"\nkind = \"read_only\"\n[[policy]]"),
    );
    let records = traced(&exp, 0);
    assert_eq!(records.len(), 200 * 5);
    let mut per_task = std::collections::BTreeMap::<u64, (u128, u128, u32)>::new();
    for (r, _) in &records {
        let e = per_task.entry(r.intent >> 20).or_default();
        e.0 += r.bill.input_tokens;
        e.1 += r.bill.output_tokens;
        e.2 += 1;
    }
    assert_eq!(per_task.len(), 200);
    for (task, (input, output, calls)) in per_task {
        assert_eq!(
            (input, output, calls),
            (100 + 170 + 240, 150, 5),
            "task {task}"
        );
    }
}

/// The shipped token-burn experiment: re-planning the whole task costs more per successful
/// task than re-planning the failed turn, which costs more than retrying the call — each gap
/// wider than the two intervals together.
#[test]
fn re_planning_from_the_start_burns_the_most_tokens() {
    let result = run_one(shipped("token-burn.toml"));
    let cost = |i: usize| {
        let e = retrysim::metrics::Estimate::from_sample(&result.policies[i].costs.per_success);
        (e.mean, e.half_width)
    };
    let [(call, call_hw), (start, start_hw), (turn, turn_hw)] = [cost(0), cost(1), cost(2)];
    assert!(
        start - turn > start_hw + turn_hw,
        "{start} ± {start_hw} vs {turn} ± {turn_hw}"
    );
    assert!(
        turn - call > turn_hw + call_hw,
        "{turn} ± {turn_hw} vs {call} ± {call_hw}"
    );
}

/// A charge priced $0.30 a call under the lost-reply forms (a = 0.1, b = 0.2, retried until a
/// reply): each attempt reaches the server with 1 − a, so a task costs 0.30 · (1 − a)/(1 − a − b)
/// — held to the cost's 99.9 % interval across replications, and the program's own form equal
/// to it.
#[test]
fn a_call_priced_per_attempt_costs_its_billed_attempts() {
    let exp = experiment(
        "name = \"c\"\nseed = 3\nreplications = 8\n[workload]\ntasks = 2000\n\
         [[tool]]\nname = \"charge\"\nrequest_loss = 0.1\nreply_loss = 0.2\nprice = { per_call = 0.3 }\n\
         [[policy]]\nname = \"p\"\nmax_attempts = \"unlimited\"\n",
    );
    let result = run_one(exp);
    let p = &result.policies[0];
    let expected = 0.3 * 0.9 / 0.7;
    let costs = &p.costs.per_task;
    let se = (costs.variance() / costs.count() as f64).sqrt();
    // 5.408: Student t's two-sided 99.9 % point on 7 degrees of freedom.
    assert!(
        (costs.mean() - expected).abs() < 5.408 * se,
        "{} ± {se} vs {expected}",
        costs.mean()
    );
    let form = p.cost_theory.expect("the closed forms apply").cost_per_task;
    assert!((form - expected).abs() < 1e-12, "{form}");
}

/// A model under the classic faults — lost requests 0.05 and 5xx before the work 0.05 (a = 0.1),
/// lost replies 0.2 (b) — retried up to 4 attempts, its stream whole: E[attempts] =
/// Σ_{k<4} (a + b)^k, each reaching the model with 1 − a and billed 1 000 input and 200 output
/// tokens at $3 and $15 a million. The mean bill of 3 000 tasks lies in its 99.9 % interval
/// around that, and the program's own form equals it.
#[test]
fn a_model_under_the_classic_faults_costs_the_attempts_of_the_forms() {
    let exp = experiment(&model(
        1_000,
        200,
        100.0,
        "request_loss = 0.05\nserver_error = 0.05\nreply_loss = 0.2",
        "max_attempts = 4",
    ));
    let (a, q): (f64, f64) = (0.1, 0.3);
    let attempts: f64 = (0..4).map(|k| q.powi(k)).sum();
    let expected = attempts * (1.0 - a) * price(1_000, 200) as f64 / 1e12;
    let bills: Vec<f64> = traced(&exp, 0)
        .iter()
        .map(|(r, _)| r.bill.cost as f64 / 1e12)
        .collect();
    let n = bills.len() as f64;
    let mean = bills.iter().sum::<f64>() / n;
    let var = bills.iter().map(|b| (b - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let se = (var / n).sqrt();
    assert!(
        (mean - expected).abs() < 3.29 * se,
        "{mean} ± {se} vs {expected}"
    );
    let result = run_one(exp);
    let form = result.policies[0].cost_theory.expect("the forms apply");
    assert!((form.cost_per_task - expected).abs() < 1e-15, "{form:?}");
    assert_eq!(form.completion, None);
}

/// A prefill apart from the first token: a model reading 2 000 input tokens a second waits
/// input/2 000 s more before its first token, so an agent loop's later turns, reading more
/// context, take longer — 100, 170 and 240 tokens: 50, 85 and 120 ms on top of 200 ms to the
/// first token, 500 ms of answer and 20 ms of network. Started over after broken streams,
/// each attempt pays the prompt's 0.5 s again: the mean completion lies in its 99.9 % interval
/// around attempts × (0.22 + 0.5) s + the time streamed, the program's own form equal to it.
#[test]
fn a_prefill_makes_a_longer_prompt_wait_longer_for_its_first_token() {
    let prefill = |toml: String| {
        assert!(toml.contains(", tokens_per_second = 100"));
        toml.replace(
            ", tokens_per_second = 100",
            ", prefill_tokens_per_second = 2000, tokens_per_second = 100",
        )
    };
    let exp = experiment(
        &prefill(model(100, 50, 100.0, "", ""))
            .replace("[workload]\ntasks = 3000\n", "[workload]\ntasks = 50\ncalls = [\"llm\", \"t\"]\nagent = { turns = { dist = \"constant\", value = 3 }, result_tokens = 20 }\n")
            .replace("[[policy]]", "[[tool]]\nname = \"t\"\nkind = \"read_only\"\n[[policy]]"),
    );
    let mut waits: Vec<u64> = (traced(&exp, 0).iter())
        .filter(|(r, _)| r.tool == 0)
        .flat_map(|(_, attempts)| attempts.iter().map(|a| (a.end.0 - a.dispatch.0) / 1_000))
        .collect();
    waits.sort_unstable();
    waits.dedup();
    assert_eq!(waits, [770, 805, 840]);

    let (breaks, seconds) = (0.1, 10.0);
    let exp = experiment(&prefill(
        model(
            1_000,
            1_000,
            100.0,
            "",
            "max_attempts = 100\nretry_on = [\"stream_broken\"]",
        )
        .replace(
            "tokens_per_second = 100 }",
            &format!("tokens_per_second = 100, stream_break = {breaks} }}"),
        ),
    ));
    let theory = BrokenStream::from_scratch(breaks, seconds, None);
    let expected = theory.attempts * (0.22 + 0.5) + theory.streaming;
    let times: Moments = (traced(&exp, 0).iter())
        .map(|(r, _)| r.end.since(r.start).seconds())
        .collect();
    let half = 3.29 * (times.variance() / times.count() as f64).sqrt();
    assert!(
        (times.mean() - expected).abs() < half,
        "{} ± {half} against {expected}",
        times.mean()
    );
    let form = run_one(exp).policies[0]
        .cost_theory
        .expect("the forms apply");
    let completion = form.completion.expect("a time form");
    assert!((completion - expected).abs() < 1e-9, "{completion}");
}

/// A resumed stream with a prefill apart keeps its cost form — the bill counts tokens, which
/// the prefill does not change — though its time has none (later prompts are longer, and wait
/// longer): the same cost form as without the prefill.
#[test]
fn a_resumed_stream_with_a_prefill_keeps_its_cost_form() {
    let config = |prefill: &str| {
        model(
            1_000,
            400,
            100.0,
            "",
            "max_attempts = 100\nretry_on = [\"stream_broken\"]\nresume = true",
        )
        .replace(
            "tokens_per_second = 100 }",
            &format!("tokens_per_second = 100, stream_break = 0.2{prefill} }}"),
        )
    };
    let forms = |text: &str| {
        let exp = experiment(text);
        retrysim::theory::stream::for_policy(&exp, &exp.policies[0]).expect("a cost form")
    };
    let (plain, prefilled) = (
        forms(&config("")),
        forms(&config(", prefill_tokens_per_second = 5000")),
    );
    assert!((plain.cost_per_task - prefilled.cost_per_task).abs() < 1e-15);
    assert!(plain.completion.is_some() && prefilled.completion.is_none());
}
