"""Lists the implementations in services/*/cityref.yaml and reads their descriptors.

    services.py list              names, one per line, in table order
    services.py get NAME KEY      one key (a list is printed shell-quoted)
"""
import pathlib
import shlex
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent


def descriptors():
    for path in sorted(ROOT.glob("services/*/cityref.yaml")):
        yield yaml.safe_load(path.read_text(encoding="utf-8"))


if __name__ == "__main__":
    if sys.argv[1] == "list":
        print("\n".join(d["name"] for d in descriptors()))
    elif sys.argv[1] == "get":
        d = next(d for d in descriptors() if d["name"] == sys.argv[2])
        value = d[sys.argv[3]]
        print(shlex.join(map(str, value)) if isinstance(value, list) else value)
