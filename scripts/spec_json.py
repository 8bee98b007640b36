"""Writes spec/openapi.json from spec/openapi.yaml (`make spec`); `--check` fails on drift.

The JSON file is generated, committed, and embedded byte for byte by every service (GET /api-docs).
"""

import json
import pathlib
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
SRC, DST = ROOT / "spec/openapi.yaml", ROOT / "spec/openapi.json"


def render() -> str:
    doc = yaml.safe_load(SRC.read_text(encoding="utf-8"))
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    text = render()
    if "--check" in sys.argv:
        if not DST.exists() or DST.read_text(encoding="utf-8") != text:
            sys.exit("spec/openapi.json is out of date with spec/openapi.yaml: run `make spec`")
        print("spec/openapi.json matches spec/openapi.yaml")
    else:
        DST.write_text(text, encoding="utf-8")
        print(f"wrote {DST.relative_to(ROOT)}")
