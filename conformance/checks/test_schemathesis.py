"""Group `schemathesis`: property-based run of the schemathesis CLI against the spec.

Fixed seed, bounded examples, explicit checks: no 5xx, no undocumented status, documented content
types, response schemas and headers. The run's log and JUnit report land in the output directory.
"""

import os
import pathlib
import re
import subprocess
import sys

from cityref_tools import resources
from conformance import runtime

CHECKS = (
    "not_a_server_error,status_code_conformance,content_type_conformance,"
    "response_schema_conformance,response_headers_conformance"
)


def schemathesis_exe() -> str:
    exe = pathlib.Path(sys.executable).with_name("schemathesis")
    return str(exe) if exe.exists() else "schemathesis"


def test_schemathesis(cfg, target):
    out = cfg.out_dir
    log = out / "schemathesis.log"
    argv = [
        schemathesis_exe(),
        "run",
        str(resources.path("spec/openapi.yaml")),
        "--url",
        target.base_url,
        "--checks",
        CHECKS,
        "--max-examples",
        str(cfg.max_examples),
        "--seed",
        str(cfg.seed),
        "--generation-database",
        "none",
        "--workers",
        "1",
        "--phases",
        "examples,coverage,fuzzing",
        "--request-timeout",
        "10",
        "--no-color",
        "--report",
        "junit",
        "--report-junit-path",
        str(out / "schemathesis-junit.xml"),
    ]
    env = dict(
        os.environ,
        SCHEMATHESIS_HOOKS="conformance.schemathesis_hooks",
        PYTHONPATH=os.pathsep.join(filter(None, [str(resources.IMPORT_ROOT), os.environ.get("PYTHONPATH")])),
    )
    try:
        proc = subprocess.run(argv, cwd=out, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
    except subprocess.TimeoutExpired:
        raise AssertionError("schemathesis did not finish within 600 s") from None
    text = proc.stdout.decode("utf-8", "replace")
    log.write_text(" ".join(argv) + "\n\n" + text, encoding="utf-8")
    m = re.search(r"(\d+) generated, .*", text)
    runtime.REPORT["schemathesis"] = m.group(0).strip() if m else f"exit code {proc.returncode}"
    assert proc.returncode == 0, f"schemathesis exit code {proc.returncode} (full log: {log})\n" + "\n".join(
        text.splitlines()[-60:]
    )
