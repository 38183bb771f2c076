//! The inside of the engine, opened for the experiments (`shamba exp`), the CLI's `sst` and
//! `inspect` commands, and tests that inject faults or emulate devices.
//!
//! Not a stable API: these are the engine's own types, and they change with it. A program
//! that stores data needs only the crate root.

pub use crate::io::{DeviceModel, FaultPlan, FaultyStorage};
pub use crate::key::user_key;
pub use crate::manager::Estimate;
pub use crate::options::{LabOptions, ReadLab};
pub use crate::table::dump_table;

pub mod fuzz;
