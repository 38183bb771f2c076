//! Seed 004 (Ribbon filters): memory against false positives and CPU for Bloom and Ribbon
//! filters alone ([`filters`]), and the Ribbon+Bloom hybrid by level on the engine
//! ([`hybrid`]).

pub mod filters;
pub mod hybrid;
