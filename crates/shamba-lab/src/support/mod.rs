//! What the experiments share: loaded trees ([`tree`], [`load`], [`storage`], kept across
//! runs by [`tree_store`]; [`full_levels`] loads them with every level spanning the key
//! range), the lookups and their measurement ([`workload`], [`lookups`], [`measure`],
//! [`figures`]), the reports ([`report`]), and what the machine says about
//! itself ([`cpu_cache`], [`process_cpu`], [`alloc_meter`]).

pub mod alloc_meter;
pub mod cpu_cache;
pub mod figures;
pub mod full_levels;
pub mod load;
pub mod lookups;
pub mod measure;
pub mod process_cpu;
pub mod report;
pub mod storage;
pub mod tree;
pub mod tree_store;
pub mod workload;
