"""Keyword options: names, types and ranges are checked before the engine opens."""

import pytest

import shamba


@pytest.mark.parametrize(
    "options",
    [
        dict(bits_per_key=5),
        dict(bits_per_key=8.5, layout="modules-eq", parts=3, policy="shamba-p"),
        dict(layout="modules-prop", parts=2, first_bits_per_key=2.0, policy="shamba-odds"),
        dict(layout="units", parts=4, policy="elastic", elastic_budget_mb=1, life_time=100),
        dict(ribbon_from_level=2, monkey=True, policy="no-last-level"),
        dict(ribbon_from_level=None, policy="shamba-f"),
        dict(cache_mb=1.5, cache_index_and_filter=True, partition=True),
        dict(compression="lz4", compaction_style="tiered"),
        dict(write_buffer_size=1 << 16, target_file_size=1 << 16, block_size=1024, max_open_files=64),
        dict(paranoid_file_checks=True, sync=True, error_if_exists=False),
        dict(background_nice=19),
        dict(cache_pct=50),
        dict(filter_memory_budget=1 << 20),
        dict(
            layout="modules-eq",
            parts=6,
            ribbon_from_level=0,
            policy="shamba-odds",
            read_rest_together=True,
            partition=True,
            cache_index_and_filter=True,
            cache_mb=0.01,
        ),
    ],
)
def test_valid_options_open_a_working_database(tmp_path, options):
    with shamba.Db(tmp_path / "db", **options) as db:
        for i in range(300):
            db[b"%05d" % i] = b"v" * 20
        db.flush()
        assert db[b"00007"] == b"v" * 20
        assert b"00007x" not in db


def test_cache_pct_sizes_the_cache_against_the_metadata(tmp_path):
    path = tmp_path / "db"
    with shamba.Db(path) as db:
        for i in range(3000):
            db[b"%06d" % i] = b"v"
        db.flush()
        metadata = db.stats()["memory"]["metadata_bytes"]
    assert metadata > 0
    with shamba.Db(path, cache_pct=50) as db:
        assert db.stats()["cache"]["capacity"] == metadata * 50 // 100


def test_filter_memory_budget_caps_the_resident_filter_bytes(tmp_path):
    path = tmp_path / "db"
    budget = 2500
    with shamba.Db(path, target_file_size=1 << 14, write_buffer_size=1 << 16) as db:
        for i in range(3000):
            db[b"%06d" % (2 * i)] = b"v" * 40
        db.flush()
        db.compact()
        filters = sum(level["filter_bytes"] for level in db.stats()["levels"])
    assert filters > budget
    with shamba.Db(path, filter_memory_budget=budget) as db:
        for i in range(3000):
            assert db[b"%06d" % (2 * i)] == b"v" * 40
            assert b"%06d" % (2 * i + 1) not in db
        memory = db.stats()["memory"]
        assert 0 < memory["filter_resident_peak_bytes"] <= budget
        assert memory["filter_loads"] > 0


def test_unknown_keyword_is_a_type_error_naming_it(tmp_path):
    with pytest.raises(TypeError, match="'bits_per_kee'"):
        shamba.Db(tmp_path / "db", bits_per_kee=10)


@pytest.mark.parametrize(
    "options, error, words",
    [
        (dict(bits_per_key="10"), TypeError, "bits_per_key must be a number"),
        (dict(bits_per_key=-1), ValueError, "bits_per_key must be a finite number"),
        (dict(bits_per_key=float("nan")), ValueError, "bits_per_key"),
        (dict(layout="modules"), ValueError, "layout must be one of whole, modules-eq"),
        (dict(layout=3), TypeError, "layout must be a str"),
        (dict(policy="shamba_p"), ValueError, "policy must be one of"),
        (dict(parts=0), ValueError, "parts must be at least 1"),
        (dict(parts=300), ValueError, "parts must be at most 255"),
        (dict(parts=2.0), TypeError, "parts must be an int"),
        (dict(ribbon_from_level=-1), ValueError, "ribbon_from_level"),
        (dict(monkey=1), TypeError, "monkey must be a bool"),
        (dict(sync="yes"), TypeError, "sync must be a bool"),
        (dict(compression="zstd"), ValueError, "compression must be one of none, lz4"),
        (dict(write_buffer_size=100), ValueError, "write_buffer_size must be at least 4096"),
        (dict(write_buffer_size=True), TypeError, "write_buffer_size must be an int"),
        (dict(max_open_files=3), ValueError, "max_open_files must be at least 16"),
        (dict(background_nice=20), ValueError, "background_nice must be in 0..=19"),
        (dict(background_nice=-1), ValueError, "background_nice"),
        (dict(cache_mb=-5), ValueError, "cache_mb"),
        (dict(cache_pct="50%"), TypeError, "cache_pct must be a number"),
        (dict(filter_memory_budget=-1), ValueError, "filter_memory_budget"),
        (dict(filter_memory_budget=1.5), TypeError, "filter_memory_budget must be an int"),
    ],
)
def test_bad_values_raise_with_the_option_named(tmp_path, options, error, words):
    with pytest.raises(error, match=words):
        shamba.Db(tmp_path / "db", **options)
    assert not (tmp_path / "db").exists()  # nothing was created


def test_what_only_the_engine_can_judge_is_an_invalid_options_error(tmp_path):
    with pytest.raises(shamba.InvalidOptionsError, match="bits_per_key must be in 0..=64") as e:
        shamba.Db(tmp_path / "db", bits_per_key=100)
    assert isinstance(e.value, ValueError)
    with pytest.raises(shamba.InvalidOptionsError, match="first_bits_per_key"):
        shamba.Db(tmp_path / "db", bits_per_key=4, layout="modules-prop", first_bits_per_key=6)


def test_error_classes_form_one_hierarchy():
    for cls in [
        shamba.IoError,
        shamba.CorruptionError,
        shamba.InvalidOptionsError,
        shamba.InvalidArgumentError,
        shamba.LockedError,
        shamba.ClosedError,
        shamba.ReadOnlyError,
        shamba.InternalError,
    ]:
        assert issubclass(cls, shamba.Error)
    assert issubclass(shamba.IoError, OSError)


def test_an_io_failure_is_an_io_error_with_errno(tmp_path, db):
    (tmp_path / "a-file").write_bytes(b"")
    with pytest.raises(shamba.IoError) as e:
        db.checkpoint(tmp_path / "a-file" / "cp")  # a file where a directory must be
    assert isinstance(e.value, OSError)
    assert e.value.errno is not None
