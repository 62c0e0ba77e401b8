"""The amendment lock opens its file first and makes ``amendments/`` only when it
is missing: on a fresh state root, and again after it was removed mid-run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from prompt_runner.control.audit import amendment_lock, quiet_amendment_lock
from prompt_runner.errors import StorageError
from prompt_runner.state.layout import StateLayout


def test_the_lock_makes_its_directory_when_missing(tmp_path: Path) -> None:
    lock = StateLayout(tmp_path).amendment_lock
    with amendment_lock(tmp_path):
        assert lock.is_file()
    shutil.rmtree(lock.parent)
    with quiet_amendment_lock(tmp_path):
        assert lock.is_file()
    with amendment_lock(tmp_path):  # the directory exists now: the file opens as it is
        assert lock.is_file()


def test_a_file_where_the_directory_should_be_is_a_storage_error(tmp_path: Path) -> None:
    lock = StateLayout(tmp_path).amendment_lock
    lock.parent.parent.mkdir(parents=True, exist_ok=True)
    lock.parent.write_text("not a directory\n")
    with pytest.raises(StorageError), amendment_lock(tmp_path):
        pass
