"""What the tests that compare a Python schedule with a schedule script share:
the kernel `schedlab show --schedule --stage kernel` prints for the script."""
import os
import subprocess

import pytest

CONFIGS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "configs")


def cli_kernel(fusion, script, sizes):
    """The script's kernel at `sizes` (a dict), without the comment header."""
    cli = os.environ.get("SCHEDLAB_CLI")
    if not cli:
        pytest.skip("SCHEDLAB_CLI is not set (CTest sets it to the built schedlab)")
    size_list = ",".join(f"{k}={v}" for k, v in sizes.items())
    out = subprocess.run(
        [cli, "show", fusion, "--schedule", os.path.join(CONFIGS, "schedules", script),
         "--stage", "kernel", "--size", size_list],
        check=True, capture_output=True, text=True).stdout
    return "".join(line + "\n" for line in out.splitlines() if not line.startswith("//"))
