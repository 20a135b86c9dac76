//! A model tool's keys: `model` (the provider's sizes, latency and broken streams),
//! `tokens_per_minute` (its token bucket) and `price`, which any tool may have.

use toml::Spanned;

use crate::config::check::{Check, Result};
use crate::config::latency::{latency, tokens};
use crate::config::raw;
use crate::model::{Price, Provider, TokenLimit, ToolKind};

/// The provider of a tool of `kind`: required of a model, refused of any other tool, whose
/// service time a model's latency would replace.
pub(super) fn provider(
    check: &Check,
    spanned: &Spanned<raw::Tool>,
    kind: ToolKind,
    path: &str,
) -> Result<Option<Provider>> {
    let tool = spanned.get_ref();
    let model_only = [
        ("model", tool.model.as_ref().map(Spanned::span)),
        (
            "tokens_per_minute",
            tool.tokens_per_minute.as_ref().map(Spanned::span),
        ),
    ];
    if kind != ToolKind::Model {
        check.none_set(
            &model_only,
            path,
            |key| {
                format!(
                    "`{key}` belongs to a model provider, and this tool's kind is \"{}\"",
                    kind.name()
                )
            },
            "kind = \"model\" beside the provider's keys",
        )?;
        return Ok(None);
    }
    let Some(model) = &tool.model else {
        return check.error_allowing(
            spanned.span(),
            &format!("{path}.model"),
            "a tool of kind \"model\" needs its `model` table".into(),
            "model = { input_tokens = {…}, output_tokens = {…}, max_tokens = N, first_token = {…}, tokens_per_second = R }",
        );
    };
    check.none_set(
        &[
            ("service_time", tool.service_time.as_ref().map(Spanned::span)),
            ("script", tool.script.as_ref().map(Spanned::span)),
        ],
        path,
        |key| format!("a model's work is its time to the first token and its answer's tokens at the decode rate, which `{key}` would replace"),
        "model.first_token and model.tokens_per_second",
    )?;
    // A replica's slower service would be the provider's latency too: not expressible here.
    if let Some((i, r)) = (tool.replica.iter().enumerate())
        .find_map(|(i, r)| r.get_ref().service_time.as_ref().map(|s| (i, s)))
    {
        return check.error_allowing(
            r.span(),
            &format!("{path}.replica[{i}].service_time"),
            "a model's replicas share its provider's latency: a service time has nothing to replace"
                .into(),
            "the replica's faults only, or a model tool of its own",
        );
    }
    let m = model.get_ref();
    let at = |key: &str| format!("{path}.model.{key}");
    let max_tokens = check.count(
        Some(&m.max_tokens),
        &at("max_tokens"),
        1,
        "a request allowed 0 output tokens generates nothing",
    )?;
    let tokens_per_second = check.number(
        Some(&m.tokens_per_second),
        &at("tokens_per_second"),
        0.0,
        |r| r.is_finite() && r > 0.0,
        "a decode rate",
        "output tokens a second, above 0 (50 to 200 for today's large models)",
    )?;
    Ok(Some(Provider {
        input_tokens: tokens(check, &m.input_tokens, &at("input_tokens"))?,
        output_tokens: tokens(check, &m.output_tokens, &at("output_tokens"))?,
        max_tokens,
        first_token: latency(check, &m.first_token, &at("first_token"))?,
        prefill: match &m.prefill_tokens_per_second {
            None => None,
            Some(r) => Some(check.number(
                Some(r),
                &at("prefill_tokens_per_second"),
                0.0,
                |r| r.is_finite() && r > 0.0,
                "a prefill rate",
                "input tokens read a second before the first token, above 0 (thousands for today's large models)",
            )?),
        },
        tokens_per_second,
        stream_break: stream_break(check, m, &at, tokens_per_second)?,
    }))
}

/// How often a stream breaks, a second of streaming: `stream_break` says it so, and
/// `stream_break_per_token`, the chance p that a token is the last before a cut, is the rate
/// −ln(1 − p) × the decode rate, so that an answer of n tokens is whole with (1 − p)ⁿ either way.
fn stream_break(
    check: &Check,
    m: &raw::Model,
    at: &dyn Fn(&str) -> String,
    tokens_per_second: f64,
) -> Result<f64> {
    let Some(p) = &m.stream_break_per_token else {
        return check.number(
            m.stream_break.as_ref(),
            &at("stream_break"),
            0.0,
            |r| r.is_finite() && r >= 0.0,
            "a rate of breaks",
            "breaks a second of streaming, 0 or more (0.01: one stream in a hundred breaks within a second)",
        );
    };
    if m.stream_break.is_some() {
        return check.error_allowing(
            p.span(),
            &at("stream_break_per_token"),
            "a stream's breaks said twice, a second and a token".into(),
            "`stream_break` (a second of streaming) or `stream_break_per_token`, not both",
        );
    }
    let p = check.number(
        Some(p),
        &at("stream_break_per_token"),
        0.0,
        |p| (0.0..1.0).contains(&p),
        "a chance of a break",
        "the chance a token is the last before a cut, at least 0 and below 1 (0.0001: one answer of 1000 tokens in ten breaks)",
    )?;
    Ok(-libm::log1p(-p) * tokens_per_second)
}

/// `tokens_per_minute = { limit, burst, scope, retry_after_unit }`: a bucket of `burst` tokens
/// (a minute's worth by default, as the providers' are) refilled at `limit` a minute.
pub(super) fn token_limit(
    check: &Check,
    spanned: &Spanned<raw::TokensPerMinute>,
    max_tokens: u32,
    path: &str,
) -> Result<TokenLimit> {
    let raw = spanned.get_ref();
    let per_minute = check.count(
        Some(&raw.limit),
        &format!("{path}.limit"),
        1,
        "a limit of 0 tokens lets nothing through",
    )?;
    let burst = check.count(
        raw.burst.as_ref(),
        &format!("{path}.burst"),
        per_minute,
        "a bucket of 0 tokens lets nothing through",
    )?;
    let (scope, unit) =
        super::tool::scope_and_unit(check, (&raw.scope, &raw.retry_after_unit), path)?;
    Ok(TokenLimit {
        per_minute,
        burst,
        scope,
        unit,
        max_tokens,
    })
}

/// The most a price may be, in dollars: a call or a million tokens. Kept so that a bill in
/// picodollars is exact (see [`crate::model::price`]).
pub(super) const MOST_PRICE: f64 = 1e6;

/// `price = { input_per_million, output_per_million, per_call }`, in dollars; token prices only
/// at a model.
pub(super) fn price(
    check: &Check,
    spanned: &Spanned<raw::Price>,
    kind: ToolKind,
    path: &str,
) -> Result<Price> {
    let raw = spanned.get_ref();
    if kind != ToolKind::Model {
        check.none_set(
            &[
                (
                    "input_per_million",
                    raw.input_per_million.as_ref().map(Spanned::span),
                ),
                (
                    "output_per_million",
                    raw.output_per_million.as_ref().map(Spanned::span),
                ),
            ],
            path,
            |key| format!("`{key}` prices a model's tokens, and this tool reads none"),
            "per_call, or kind = \"model\"",
        )?;
    }
    let dollars = |v: &Option<Spanned<f64>>, key: &str| {
        check.number(
            v.as_ref(),
            &format!("{path}.{key}"),
            0.0,
            |d| d.is_finite() && (0.0..=MOST_PRICE).contains(&d),
            "a price here",
            "dollars from 0 to 1000000 (a model's prices are quoted per million tokens)",
        )
    };
    Ok(Price::quoted(
        dollars(&raw.input_per_million, "input_per_million")?,
        dollars(&raw.output_per_million, "output_per_million")?,
        dollars(&raw.per_call, "per_call")?,
    ))
}
