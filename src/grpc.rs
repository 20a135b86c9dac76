//! gRPC's status codes, by number and by name, as service configs and traces write them.

/// Each status's name, at its number.
pub const STATUS: [&str; 17] = [
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
];

/// The number of the status named `name`.
pub fn code(name: &str) -> Option<u32> {
    STATUS.iter().position(|n| *n == name).map(|i| i as u32)
}
