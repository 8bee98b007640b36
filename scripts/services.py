"""Lists the implementations in services/*/cityref.yaml and reads their descriptors.

    services.py list              names, one per line, alphabetical (the directory names)
    services.py get NAME KEY      one key (a list is printed shell-quoted)
    services.py start NAME PORT ES_URL LOG PIDFILE
                                  start it in the background (own session, no inherited fds)
"""
import os
import pathlib
import shlex
import subprocess
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent


def start(name: str, port: str, es_url: str, log: str, pidfile: str) -> None:
    d = descriptor(name)
    env = dict(os.environ, PORT=port, ELASTICSEARCH_URL=es_url)
    with open(log, "ab") as out:
        proc = subprocess.Popen(d["command"], cwd=ROOT / "services" / name, env=env, stdin=subprocess.DEVNULL,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True, close_fds=True)
    pathlib.Path(pidfile).write_text(f"{proc.pid}\n")


def descriptor(name: str) -> dict:
    return next(d for d in descriptors() if d["name"] == name)


def descriptors():
    for path in sorted(ROOT.glob("services/*/cityref.yaml")):
        yield yaml.safe_load(path.read_text(encoding="utf-8"))


if __name__ == "__main__":
    if sys.argv[1] == "list":
        print("\n".join(d["name"] for d in descriptors()))
    elif sys.argv[1] == "get":
        value = descriptor(sys.argv[2])[sys.argv[3]]
        print(shlex.join(map(str, value)) if isinstance(value, list) else value)
    elif sys.argv[1] == "start":
        start(*sys.argv[2:7])
