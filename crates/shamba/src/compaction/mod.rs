//! Compaction: picking what to merge, merging, and writing the output.
