from prompt_runner.errors import LockHeldError, UserError


def test_user_error_is_one_sentence_naming_file_key_and_fix() -> None:
    err = UserError(
        "must be a positive integer",
        file="prompts/03_x.prompt.md",
        key="verify.commands[0].timeout_ms",
        fix="set it to the deadline in milliseconds",
    )
    assert str(err) == (
        "prompts/03_x.prompt.md: verify.commands[0].timeout_ms: must be a positive integer; "
        "set it to the deadline in milliseconds."
    )
    assert err.exit_code == 2


def test_lock_held_error_names_pid_and_exits_3(tmp_path) -> None:  # type: ignore[no-untyped-def]
    err = LockHeldError(tmp_path / "run.pid", 4242)
    assert "4242" in str(err) and "run.pid" in str(err)
    assert err.exit_code == 3
