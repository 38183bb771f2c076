//! Property tests over every filter kind and layout: no false negatives ever (empty, tiny,
//! duplicate-laden and large key sets), parts parse back consistently, and corrupt or
//! truncated parts are rejected (or stay safe to probe) without panicking.

use proptest::prelude::*;

use super::testing::digests;
use super::{build_filter_parts, BloomLayout, Digest, FilterPart, FilterSpec, ModuleSizes, Probing, Role};

fn all_specs() -> Vec<FilterSpec> {
    vec![
        FilterSpec::Bloom { bits_per_key: 10.0 },
        FilterSpec::Bloom { bits_per_key: 3.3 },
        FilterSpec::StandardBloom { bits_per_key: 9.0, probing: Probing::Rotation },
        FilterSpec::StandardBloom { bits_per_key: 9.0, probing: Probing::DoubleHashing },
        FilterSpec::ModularBloom {
            bits_per_key: 10.0,
            modules: ModuleSizes::Equal { count: 3 },
            layout: BloomLayout::Standard(Probing::Rotation),
        },
        FilterSpec::ModularBloom {
            bits_per_key: 10.0,
            modules: ModuleSizes::Proportional { count: 2, first_bits_per_key: 7.0 },
            layout: BloomLayout::Blocked,
        },
        FilterSpec::Elastic { bits_per_key: 12.0, units: 4, layout: BloomLayout::Blocked },
        FilterSpec::Elastic { bits_per_key: 10.0, units: 7, layout: BloomLayout::Standard(Probing::DoubleHashing) },
        FilterSpec::Ribbon { fp_rate: 0.01 },
        FilterSpec::Ribbon { fp_rate: 0.3 },
        FilterSpec::ModularRibbon { fp_rate: 0.005, modules: ModuleSizes::Equal { count: 2 } },
        FilterSpec::ModularRibbon {
            fp_rate: 0.001,
            modules: ModuleSizes::Proportional { count: 3, first_bits_per_key: 4.0 },
        },
    ]
}

fn check_no_false_negatives(spec: &FilterSpec, keys: &[Digest]) -> Result<(), TestCaseError> {
    let parts = build_filter_parts(spec, keys);
    prop_assert!(!parts.is_empty(), "{spec:?} built no filter");
    let parsed: Vec<FilterPart<'_>> =
        parts.iter().map(|p| FilterPart::parse(p)).collect::<Result<_, _>>().map_err(|e| TestCaseError::fail(e.0))?;
    for (i, p) in parsed.iter().enumerate() {
        prop_assert_eq!(usize::from(p.part_index()), i);
        prop_assert_eq!(usize::from(p.part_count()), parsed.len());
        prop_assert_eq!(p.num_keys(), keys.len() as u64);
        prop_assert_eq!(p.size_bytes(), parts[i].len());
        prop_assert!(p.role() == Role::Whole || parsed.len() > 1 || p.role() != Role::Whole);
        prop_assert!(!p.to_string().is_empty());
    }
    for d in keys {
        for p in &parsed {
            prop_assert!(p.may_contain(d), "false negative in {spec:?} part {}", p.part_index());
        }
    }
    Ok(())
}

fn keys_strategy() -> impl Strategy<Value = Vec<Digest>> {
    (prop::collection::vec((any::<u64>(), any::<u64>()), 0..600), 0usize..4).prop_map(|(pairs, dup_every)| {
        let mut v: Vec<Digest> = pairs.into_iter().map(|(h1, h2)| Digest { h1, h2 }).collect();
        if dup_every > 0 {
            let dups: Vec<Digest> = v.iter().step_by(dup_every).copied().collect();
            v.extend(dups);
        }
        v
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn no_false_negatives_for_any_key_set(keys in keys_strategy()) {
        for spec in all_specs() {
            check_no_false_negatives(&spec, &keys)?;
        }
    }

    #[test]
    fn corrupt_parts_never_panic(which in 0usize..12, at in any::<prop::sample::Index>(), byte in any::<u8>(), cut in any::<prop::sample::Index>()) {
        let specs = all_specs();
        let spec = &specs[which % specs.len()];
        let keys = digests(11, 300);
        let parts = build_filter_parts(spec, &keys);
        for part in &parts {
            let mut bad = part.clone();
            let i = at.index(bad.len());
            bad[i] = byte;
            if let Ok(p) = FilterPart::parse(&bad) {
                for d in &keys[..50] {
                    let _ = p.may_contain(d);
                }
                let _ = p.to_string();
            }
            let n = cut.index(part.len());
            prop_assert!(FilterPart::parse(&part[..n]).is_err(), "truncated to {n} of {} accepted", part.len());
        }
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        if let Ok(p) = FilterPart::parse(&bytes) {
            let _ = p.may_contain(&Digest { h1: 1, h2: 2 });
        }
    }

    #[test]
    fn random_headers_with_valid_lengths_never_panic(kind in 1u8..4, params in prop::collection::vec(any::<u8>(), 0..40), payload_len in 0usize..300) {
        let mut bytes = vec![1, kind, 1, 0, 0, 1, 0, params.len() as u8];
        bytes.extend_from_slice(&(payload_len as u64).to_le_bytes());
        bytes.extend_from_slice(&params);
        bytes.extend(std::iter::repeat_n(0xA5, payload_len));
        if let Ok(p) = FilterPart::parse(&bytes) {
            for d in digests(12, 20) {
                let _ = p.may_contain(&d);
            }
        }
    }
}

#[test]
fn hundreds_of_thousands_of_keys_have_no_false_negatives() {
    let keys = digests(13, 300_000);
    for spec in all_specs() {
        check_no_false_negatives(&spec, &keys).unwrap();
    }
}

#[test]
fn empty_and_single_key_sets_are_filters() {
    for spec in all_specs() {
        check_no_false_negatives(&spec, &[]).unwrap();
        check_no_false_negatives(&spec, &digests(14, 1)).unwrap();
    }
}

#[test]
fn no_filter_specs_build_nothing() {
    let keys = digests(15, 10);
    assert!(build_filter_parts(&FilterSpec::None, &keys).is_empty());
    assert!(build_filter_parts(&FilterSpec::Bloom { bits_per_key: 0.0 }, &keys).is_empty());
    assert!(build_filter_parts(&FilterSpec::Bloom { bits_per_key: f64::NAN }, &keys).is_empty());
    assert!(build_filter_parts(&FilterSpec::Ribbon { fp_rate: 1.0 }, &keys).is_empty());
}

#[test]
fn unbuildable_ribbon_falls_back_to_bloom_and_says_why() {
    let keys = digests(16, 1000);
    let parts = build_filter_parts(&FilterSpec::Ribbon { fp_rate: 1e-12 }, &keys);
    let p = FilterPart::parse(&parts[0]).unwrap();
    assert_eq!(p.kind(), super::PartKind::BlockedBloom);
    assert_eq!(p.fallback(), super::FallbackReason::RibbonUnsupportedRate);
    assert!(p.to_string().contains("fallback"));
    assert!(keys.iter().all(|d| p.may_contain(d)));
}

#[test]
fn parts_of_another_digest_version_are_rejected() {
    let keys = digests(17, 10);
    let parts = super::build_filter_parts_with_version(&FilterSpec::Bloom { bits_per_key: 10.0 }, &keys, 4);
    assert!(FilterPart::parse(&parts[0]).is_err());
    assert!(FilterPart::parse_expecting(&parts[0], Some(4)).is_ok());
}

/// Decoding and probing a damaged part stays cheap for every byte and value: a field such
/// as a key count must not drive a loop (it once drove the FP-rate series for seconds).
#[test]
fn damaged_parts_are_cheap_to_reject_or_probe() {
    let keys = digests(11, 300);
    for spec in all_specs() {
        for part in build_filter_parts(&spec, &keys) {
            for i in 0..part.len().min(64) {
                for byte in [0u8, 1, 7, 64, 128, 255] {
                    let mut bad = part.clone();
                    bad[i] = byte;
                    let t = std::time::Instant::now();
                    if let Ok(p) = FilterPart::parse(&bad) {
                        for d in &keys[..20] {
                            let _ = p.may_contain(d);
                        }
                        let _ = p.to_string();
                        let _ = p.expected_fpr();
                    }
                    assert!(
                        t.elapsed() < std::time::Duration::from_millis(500),
                        "{spec:?}: byte {i} set to {byte} took {:?}",
                        t.elapsed()
                    );
                }
            }
        }
    }
}
