"""Lists the implementations in services/*/cityref.yaml and reads their descriptors.

services.py list              names, one per line, alphabetical (the directory names); with
                              SERVICES set (`make up SERVICES=rust-actix,go-kit`), only those
services.py get NAME KEY      one key (a list is printed shell-quoted)
services.py start NAME PORT ES_URL LOG PIDFILE
                              start it in the background (own session, no inherited fds)
"""

import os
import pathlib
import shlex
import subprocess
import sys

from cityref_tools import descriptors, processes


def start(name: str, port: str, es_url: str, log: str, pidfile: str) -> None:
    d = descriptor(name)
    env = dict(os.environ, PORT=port, ELASTICSEARCH_URL=es_url)
    with open(log, "ab") as out:
        proc = processes.start_session(
            [str(a) for a in d["command"]],
            cwd=descriptors.SERVICES / name,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    pathlib.Path(pidfile).write_text(f"{proc.pid}\n")


def chosen() -> list[str]:
    """Every implementation, or those named in $SERVICES (comma- or space-separated)."""
    names = [d["name"] for d in descriptors.all_services()]
    wanted = os.environ.get("SERVICES", "").replace(",", " ").split()
    unknown = [w for w in wanted if w not in names]
    if unknown:
        sys.exit(f"SERVICES names no implementation: {', '.join(unknown)} (there are: {', '.join(names)})")
    return [n for n in names if n in wanted] if wanted else names


def descriptor(name: str) -> dict:
    return next(d for d in descriptors.all_services() if d["name"] == name)


if __name__ == "__main__":
    if sys.argv[1] == "list":
        print("\n".join(chosen()))
    elif sys.argv[1] == "get":
        value = descriptor(sys.argv[2])[sys.argv[3]]
        print(shlex.join(map(str, value)) if isinstance(value, list) else value)
    elif sys.argv[1] == "start":
        start(*sys.argv[2:7])
