//! The `shamba` command's library part: `bench`, the load-then-read benchmark, which the lab
//! binary (`shamba-lab bench`) runs too, with its own knobs passed as a [`bench::Tuning`].

#![deny(clippy::unwrap_used, clippy::undocumented_unsafe_blocks, unsafe_op_in_unsafe_fn)]
#![warn(clippy::expect_used)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod bench;
