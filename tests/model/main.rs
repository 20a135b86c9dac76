//! The simulation through the library: closed forms, common random numbers, keys, timeouts,
//! hedges, the seeds' scenarios to the tick, and properties of random small experiments. One
//! binary for the area, so the suite links the crate few times.

mod amplification;
mod bursts;
mod common;
mod connect;
mod contention;
mod crashes;
mod experiments;
mod explore;
mod gates;
mod generate;
mod graphs;
mod hedging;
mod limits;
mod properties;
mod providers;
mod pushback;
mod scenarios;
mod scope;
mod send_rate;
mod servers;
mod simulation;
mod storms;
mod texts;
mod timeouts;
mod verdict;
