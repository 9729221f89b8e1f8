"""tests/run.sh with stand-ins for cmake and ctest: it uses the python3 on PATH when that has the packages
(the GPU machine has no network), and shows why CTest skipped the GPU tests (issue 10 case 9)."""
import os
import subprocess
import sys

from conftest import ROOT

CTEST = """#!/bin/sh
# Stand-in: the GPU tests skip, as tests/gpu/main.cu does without a GPU.
mkdir -p "$BUILD_DIR/Testing/Temporary"
printf 'Output:\\ngpu_tests: GPU tests skipped: no CUDA-capable device is detected\\n' >"$BUILD_DIR/Testing/Temporary/LastTest.log"
echo "1/1 Test #1: gpu_tests ....***Skipped"
"""


def test_skip_reason_shown_and_python_on_path_used(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("cmake", "#!/bin/sh\nexit 0\n"), ("ctest", CTEST),
                       ("python3", f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    (tmp_path / "test_ok.py").write_text("def test_ok():\n    assert True\n")
    env = dict(os.environ, PATH=f"{bin_dir}:/usr/bin:/bin", BUILD_DIR=str(tmp_path / "build"),
               MH_PYTEST_ARGS=str(tmp_path / "test_ok.py"))
    had_venv = (ROOT / ".venv").exists()
    r = subprocess.run(["bash", str(ROOT / "tests" / "run.sh")], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "gpu_tests: GPU tests skipped: no CUDA-capable device is detected" in r.stdout
    assert "1 passed" in r.stdout and "making .venv" not in r.stdout
    assert (ROOT / ".venv").exists() == had_venv
