import pytest

import shamba


@pytest.fixture
def db(tmp_path):
    d = shamba.Db(tmp_path / "db")
    yield d
    d.close()
