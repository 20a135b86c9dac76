//! The two wire formats a model tool speaks, so that the real SDKs can be pointed at the
//! endpoint unchanged: OpenAI's chat completions (`POST …/v1/chat/completions`, a stream of
//! `data:` blocks ending `data: [DONE]`) and Anthropic's messages (`POST …/v1/messages`, named
//! events from `message_start` to `message_stop`). What is read of a request, and every body
//! and event written, is here; when each is sent is the server's.

use serde_json::{Value, json};

/// A model API's dialect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    OpenAi,
    Anthropic,
}

impl Dialect {
    /// The dialect a path below a model tool names: `v1/chat/completions` or `v1/messages`.
    pub fn of_path(rest: &str) -> Option<Dialect> {
        match rest.trim_matches('/') {
            "v1/chat/completions" | "chat/completions" => Some(Dialect::OpenAi),
            "v1/messages" | "messages" => Some(Dialect::Anthropic),
            _ => None,
        }
    }
}

/// What the endpoint reads of a model request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelRequest {
    pub model: String,
    pub stream: bool,
    /// The request's cap on the answer, where it sets one.
    pub max_tokens: Option<u64>,
}

/// The most characters of a model's name kept for the answer.
const MOST_MODEL_CHARS: usize = 128;

/// Reads a model request's body: a JSON object with `model` and `messages` (an array), and
/// optionally `stream` and `max_tokens` (or OpenAI's `max_completion_tokens`). `Err` says
/// what is wrong, for a 400.
pub fn read_request(body: &[u8]) -> Result<ModelRequest, String> {
    let value: Value = serde_json::from_slice(body).map_err(|e| format!("not JSON: {e}"))?;
    let object = value.as_object().ok_or("a JSON object")?;
    let model = match object.get("model") {
        Some(Value::String(m)) => m.chars().take(MOST_MODEL_CHARS).collect(),
        _ => return Err("`model`, a string".into()),
    };
    if !object.get("messages").is_some_and(Value::is_array) {
        return Err("`messages`, an array".into());
    }
    let stream = match object.get("stream") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("`stream`, true or false".into()),
    };
    let max = object
        .get("max_tokens")
        .or(object.get("max_completion_tokens"));
    let max_tokens = match max {
        None | Some(Value::Null) => None,
        Some(v) => Some(v.as_u64().ok_or("`max_tokens`, a whole number")?),
    };
    Ok(ModelRequest {
        model,
        stream,
        max_tokens,
    })
}

/// The text of `n` tokens, one word a token.
fn text(n: u64) -> String {
    " token".repeat(usize::try_from(n).unwrap_or(0))
}

/// A whole answer of `output` tokens to a prompt of `input`, not streamed.
pub fn completion(d: Dialect, req: &ModelRequest, id: &str, (input, output): (u64, u64)) -> String {
    let value = match d {
        Dialect::OpenAi => json!({
            "id": id, "object": "chat.completion", "created": 0, "model": req.model,
            "choices": [{ "index": 0, "finish_reason": "stop", "logprobs": null,
                "message": { "role": "assistant", "content": text(output), "refusal": null } }],
            "usage": { "prompt_tokens": input, "completion_tokens": output,
                "total_tokens": input + output },
        }),
        Dialect::Anthropic => json!({
            "id": id, "type": "message", "role": "assistant", "model": req.model,
            "content": [{ "type": "text", "text": text(output) }],
            "stop_reason": "end_turn", "stop_sequence": null,
            "usage": { "input_tokens": input, "output_tokens": output },
        }),
    };
    value.to_string()
}

/// An SSE block: OpenAI's bare `data:`, Anthropic's named event.
fn event(d: Dialect, name: &str, data: &Value) -> String {
    match d {
        Dialect::OpenAi => format!("data: {data}\n\n"),
        Dialect::Anthropic => format!("event: {name}\ndata: {data}\n\n"),
    }
}

/// What opens a stream, sent with the first token: OpenAI's first chunk (the role), Anthropic's
/// `message_start` and its text block's start.
pub fn stream_start(d: Dialect, req: &ModelRequest, id: &str, input: u64) -> String {
    match d {
        Dialect::OpenAi => event(
            d,
            "",
            &chunk(req, id, json!({ "role": "assistant", "content": "" }), None),
        ),
        Dialect::Anthropic => {
            let start = json!({ "type": "message_start", "message": {
                "id": id, "type": "message", "role": "assistant", "model": req.model,
                "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": { "input_tokens": input, "output_tokens": 0 } } });
            let block = json!({ "type": "content_block_start", "index": 0,
                "content_block": { "type": "text", "text": "" } });
            event(d, "message_start", &start) + &event(d, "content_block_start", &block)
        }
    }
}

fn chunk(req: &ModelRequest, id: &str, delta: Value, finish: Option<&str>) -> Value {
    json!({ "id": id, "object": "chat.completion.chunk", "created": 0, "model": req.model,
        "choices": [{ "index": 0, "delta": delta, "logprobs": null, "finish_reason": finish }] })
}

/// A block carrying `n` more tokens of the answer.
pub fn stream_tokens(d: Dialect, req: &ModelRequest, id: &str, n: u64) -> String {
    match d {
        Dialect::OpenAi => event(d, "", &chunk(req, id, json!({ "content": text(n) }), None)),
        Dialect::Anthropic => event(
            d,
            "content_block_delta",
            &json!({ "type": "content_block_delta",
            "index": 0, "delta": { "type": "text_delta", "text": text(n) } }),
        ),
    }
}

/// What closes a whole stream of `output` tokens: the finish, and OpenAI's `[DONE]` or
/// Anthropic's `message_stop`.
pub fn stream_end(d: Dialect, req: &ModelRequest, id: &str, output: u64) -> String {
    match d {
        Dialect::OpenAi => {
            event(d, "", &chunk(req, id, json!({}), Some("stop"))) + "data: [DONE]\n\n"
        }
        Dialect::Anthropic => {
            let stop = json!({ "type": "content_block_stop", "index": 0 });
            let delta = json!({ "type": "message_delta",
                "delta": { "stop_reason": "end_turn", "stop_sequence": null },
                "usage": { "output_tokens": output } });
            event(d, "content_block_stop", &stop)
                + &event(d, "message_delta", &delta)
                + &event(d, "message_stop", &json!({ "type": "message_stop" }))
        }
    }
}

/// An error body of `status` in the dialect's shape.
pub fn error(d: Dialect, status: u16, message: &str) -> String {
    let kind = match status {
        429 => "rate_limit_error",
        529 => "overloaded_error",
        503 => "service_unavailable",
        400 => "invalid_request_error",
        403 => "permission_error",
        _ => "api_error",
    };
    match d {
        Dialect::OpenAi => json!({ "error": { "message": message, "type": kind, "param": null,
            "code": null } }),
        Dialect::Anthropic => json!({ "type": "error", "error": { "type": kind,
            "message": message } }),
    }
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(stream: bool) -> ModelRequest {
        ModelRequest {
            model: "m".into(),
            stream,
            max_tokens: Some(5),
        }
    }

    #[test]
    fn a_request_is_read_or_refused_with_a_reason() {
        let ok = br#"{"model":"gpt","messages":[{"role":"user","content":"hi"}],"stream":true,"max_tokens":7}"#;
        let r = read_request(ok).unwrap();
        assert_eq!(
            (r.model.as_str(), r.stream, r.max_tokens),
            ("gpt", true, Some(7))
        );
        for bad in [
            &b"[]"[..],
            br#"{"messages":[]}"#,
            br#"{"model":"m"}"#,
            br#"{"model":"m","messages":[],"stream":1}"#,
            b"{",
        ] {
            assert!(
                read_request(bad).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    /// Each dialect's stream parses as its SDK reads it: OpenAI's `data:` blocks of JSON ending
    /// `[DONE]`, whose contents add up to the answer; Anthropic's events in their order.
    #[test]
    fn streams_frame_as_each_sdk_reads_them() {
        let r = req(true);
        let openai = stream_start(Dialect::OpenAi, &r, "c1", 3)
            + &stream_tokens(Dialect::OpenAi, &r, "c1", 2)
            + &stream_end(Dialect::OpenAi, &r, "c1", 2);
        let datas: Vec<&str> = openai.split("\n\n").filter(|b| !b.is_empty()).collect();
        assert_eq!(datas.last(), Some(&"data: [DONE]"));
        let content: String = datas[..datas.len() - 1]
            .iter()
            .map(|b| {
                let v: Value = serde_json::from_str(b.strip_prefix("data: ").unwrap()).unwrap();
                v["choices"][0]["delta"]["content"]
                    .as_str()
                    .unwrap_or("")
                    .to_string()
            })
            .collect();
        assert_eq!(content, " token token");
        let anthropic = stream_start(Dialect::Anthropic, &r, "m1", 3)
            + &stream_tokens(Dialect::Anthropic, &r, "m1", 1)
            + &stream_end(Dialect::Anthropic, &r, "m1", 1);
        let names: Vec<&str> = anthropic
            .lines()
            .filter_map(|l| l.strip_prefix("event: "))
            .collect();
        assert_eq!(
            names,
            [
                "message_start",
                "content_block_start",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop"
            ]
        );
        let whole: Value =
            serde_json::from_str(&completion(Dialect::Anthropic, &r, "m1", (3, 2))).unwrap();
        assert_eq!(whole["usage"]["output_tokens"], 2);
    }
}
