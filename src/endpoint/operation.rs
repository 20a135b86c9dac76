//! Where a request's business operation comes from — the order it places, the charge it makes —
//! so that commits can be counted per operation whatever the client sends: its idempotency key
//! (`key`), a header the user names (`header:X-Order-Id`), or a field of its JSON body
//! (`json:order_id`, or a dotted path `json:order.id`). A client that sends no key is exactly
//! the one whose duplicates matter, so the key is only one of the ways.

use std::str::FromStr;

/// The most characters of an operation's identity kept: a longer one is cut there (two
/// operations differing only past it would be counted as one, which no order id does).
pub const MOST_OPERATION_CHARS: usize = 255;

/// Where the operation of a request is read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OperationFrom {
    /// The `Idempotency-Key` header.
    Key,
    /// A header, by its name (matched without regard to case).
    Header(String),
    /// A field of the JSON body, by its path of object keys.
    Json(Vec<String>),
}

impl FromStr for OperationFrom {
    type Err = String;

    fn from_str(s: &str) -> Result<OperationFrom, String> {
        let bad = || {
            format!(
                "\"{s}\" names no place to read an operation from: `key` (the Idempotency-Key \
                 header), `header:NAME` or `json:FIELD` (a dotted path, such as json:order.id)"
            )
        };
        match s.split_once(':') {
            None if s == "key" => Ok(OperationFrom::Key),
            Some(("header", name))
                if !name.is_empty() && name.bytes().all(|b| b.is_ascii_graphic() && b != b':') =>
            {
                Ok(OperationFrom::Header(name.to_ascii_lowercase()))
            }
            Some(("json", path)) if !path.is_empty() => {
                let fields: Vec<String> = path.split('.').map(str::to_string).collect();
                if fields.iter().any(String::is_empty) {
                    return Err(bad());
                }
                Ok(OperationFrom::Json(fields))
            }
            _ => Err(bad()),
        }
    }
}

impl OperationFrom {
    /// The operation of a request with idempotency key `key`, headers read by `header` (a
    /// lower-case name), and body `body`; `None` where the place named holds none.
    pub fn read<'h>(
        &self,
        key: Option<&str>,
        header: impl Fn(&str) -> Option<&'h str>,
        body: &[u8],
    ) -> Option<String> {
        let found = match self {
            OperationFrom::Key => key.map(str::to_string),
            OperationFrom::Header(name) => header(name).map(str::to_string),
            OperationFrom::Json(path) => json_field(body, path),
        }?;
        let cut: String = found.chars().take(MOST_OPERATION_CHARS).collect();
        (!cut.is_empty()).then_some(cut)
    }
}

/// The value at `path` in a JSON body: a string as it is, a number or a boolean as written;
/// `None` for a body that is no JSON object, a missing field, or an object, array or null.
pub fn json_field(body: &[u8], path: &[String]) -> Option<String> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let mut at = &value;
    for field in path {
        at = at.as_object()?.get(field)?;
    }
    match at {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_operation_is_read_where_the_user_says() {
        let body = br#"{"order": {"id": 42}, "order_id": "o-7"}"#;
        let none = |_: &str| None;
        let read = |from: &str| {
            from.parse::<OperationFrom>()
                .unwrap()
                .read(Some("k1"), none, body)
        };
        assert_eq!(read("key").as_deref(), Some("k1"));
        assert_eq!(read("json:order_id").as_deref(), Some("o-7"));
        assert_eq!(read("json:order.id").as_deref(), Some("42"));
        assert_eq!(read("json:order").as_deref(), None);
        let header = |name: &str| (name == "x-order").then_some("h-3");
        let from: OperationFrom = "header:X-Order".parse().unwrap();
        assert_eq!(from.read(None, header, b"").as_deref(), Some("h-3"));
        for bad in ["", "keys", "header:", "json:", "json:a..b", "body:x"] {
            assert!(bad.parse::<OperationFrom>().is_err(), "{bad}");
        }
    }
}
