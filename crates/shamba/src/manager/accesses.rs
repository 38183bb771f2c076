//! What the filter manager counted per table since the database opened: the raw numbers
//! behind alpha and beta, for experiments that study them (seed 002, Figs. 2, 3 and 5).

/// One table's lookups since open, as the filter manager counted them (policies other
/// than `Plain`, which counts nothing).
#[derive(Debug, Clone, PartialEq)]
pub struct TableAccesses {
    /// Its level.
    pub level: usize,
    /// Its file number.
    pub number: u64,
    /// Its smallest user key.
    pub smallest_key: Vec<u8>,
    /// Its largest user key.
    pub largest_key: Vec<u8>,
    /// Lookups that reached it (its filter was consulted or skipped).
    pub accesses: u64,
    /// Lookups that found their key in it.
    pub positives: u64,
    /// Table-reaching lookups of the database since the table's state was made (its age).
    pub age: u64,
    /// Analytic FP rate of each filter part.
    pub part_fprs: Vec<f64>,
    /// Bytes of each filter part.
    pub part_bytes: Vec<u64>,
}
