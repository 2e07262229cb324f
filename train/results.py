"""Temporary: moved to train.run_folder (removed once every caller imports it from there)."""
from train.run_folder import (  # noqa: F401
    OUT_DIR_REMEDY,
    RunFolder,
    check_out_dir,
    format_text,
    refresh_status,
    summarise,
    write_atomic,
)
from train.errors import OutputError  # noqa: F401
