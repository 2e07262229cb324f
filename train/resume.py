"""Temporary: moved to train.run_folder and train.checkpoint."""
from data.common import graph_data_fingerprint, node_data_fingerprint  # noqa: F401
from train.checkpoint import Progress, restore_run, run_state  # noqa: F401
from train.run_folder import RESUME_FREE as FREE_KEYS  # noqa: F401
from train.run_folder import ResumePoint, difference, open_run, run_config  # noqa: F401
