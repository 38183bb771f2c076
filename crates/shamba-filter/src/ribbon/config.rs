//! How many slots a Ribbon filter needs for a number of keys.
//!
//! Standard 128-bit Ribbon (no "smash") succeeds with probability about 19/20 when the
//! number of slots is this much above the number of keys. The data are RocksDB's measured
//! `kOneIn20` occupancy table for 128-bit coefficients (`util/ribbon_config.cc`): known
//! key counts for power-of-two slot counts up to 2^17, then an overhead factor that grows
//! by 0.0038 per doubling. Between powers of two we interpolate linearly, like RocksDB.
//! For 1M keys the overhead is about 4.75%.

#![deny(clippy::indexing_slicing)]

/// Keys that fit in 2^i slots with a 1-in-20 construction failure chance (0 = unsupported).
const KNOWN_TO_ADD_BY_POW2: [f64; 18] = [
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 248.851, 499.532, 1001.26, 2003.97, 4005.59, 8000.39, 15966.6, 31828.1,
    63447.3, 126506.0,
];
/// Overhead growth per doubling of the slot count, past the known table.
const FACTOR_PER_POW2: f64 = 0.0038;
/// Coefficient width: slots per block.
pub const COEFF_BITS: u64 = 128;
/// Fewest slots a filter has (two blocks, so that keys are not all stacked on one start).
pub const MIN_SLOTS: u64 = 2 * COEFF_BITS;

fn final_known_factor() -> f64 {
    let [.., last_keys] = KNOWN_TO_ADD_BY_POW2;
    (1u64 << (KNOWN_TO_ADD_BY_POW2.len() - 1)) as f64 / last_keys
}

fn keys_for_pow2(log2_slots: u32) -> f64 {
    match KNOWN_TO_ADD_BY_POW2.get(log2_slots as usize) {
        Some(&k) => k,
        None => {
            let last = (KNOWN_TO_ADD_BY_POW2.len() - 1) as f64;
            let factor = final_known_factor() + (f64::from(log2_slots) - last) * FACTOR_PER_POW2;
            2f64.powi(log2_slots as i32) / factor
        }
    }
}

/// Slots (a multiple of 128, at least 256) for `num_keys` keys; `None` past 2^32 slots.
pub fn num_slots_for(num_keys: u64) -> Option<u64> {
    if num_keys == 0 {
        return Some(MIN_SLOTS);
    }
    let n = num_keys as f64;
    // Find the powers of two whose capacities bracket n, then interpolate.
    let mut log2 = 8u32;
    while keys_for_pow2(log2 + 1) <= n {
        log2 += 1;
        if log2 >= 40 {
            return None;
        }
    }
    let lower_keys = keys_for_pow2(log2);
    let slots = if n < lower_keys {
        MIN_SLOTS as f64
    } else {
        let upper_keys = keys_for_pow2(log2 + 1);
        let portion = (n - lower_keys) / (upper_keys - lower_keys);
        let lower_slots = 2f64.powi(log2 as i32);
        lower_slots + portion * lower_slots
    };
    let slots = (slots.ceil() as u64).div_ceil(COEFF_BITS) * COEFF_BITS;
    let slots = slots.max(MIN_SLOTS);
    (slots <= u64::from(u32::MAX)).then_some(slots)
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn overhead_is_a_few_percent_and_grows_slowly() {
        let o = |n: u64| num_slots_for(n).unwrap() as f64 / n as f64;
        assert!(o(100_000) > 1.02 && o(100_000) < 1.045, "{}", o(100_000));
        assert!(o(1_000_000) > 1.035 && o(1_000_000) < 1.055, "{}", o(1_000_000));
        assert!(o(1_000_000) > o(100_000));
    }

    #[test]
    fn slots_are_whole_blocks_and_never_too_few() {
        for n in [0u64, 1, 2, 100, 248, 249, 250, 1000, 12_345, 1 << 20] {
            let s = num_slots_for(n).unwrap();
            assert_eq!(s % COEFF_BITS, 0);
            assert!(s >= MIN_SLOTS && s >= n, "{n} -> {s}");
        }
        assert_eq!(num_slots_for(u64::MAX), None);
    }
}
