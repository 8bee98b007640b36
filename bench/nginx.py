"""nginx configurations: the floor (a reverse proxy doing the services' hop) and the static upstream."""

from __future__ import annotations

from pathlib import Path

CITY_FIELDS = "id,countryIso,isFeatured,regionId,name.$arg_language"

_COMMON = """worker_processes {workers};
daemon off;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
worker_rlimit_nofile 16384;
events {{ worker_connections 8192; }}
http {{
  access_log off;
  client_body_temp_path {dir}/tmp/body;
  proxy_temp_path {dir}/tmp/proxy;
  fastcgi_temp_path {dir}/tmp/fastcgi;
  uwsgi_temp_path {dir}/tmp/uwsgi;
  scgi_temp_path {dir}/tmp/scgi;
  keepalive_requests 1000000;
  keepalive_timeout 75s;
{body}
}}
"""


def _render(directory: Path, workers: int, body: str) -> str:
    for sub in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (directory / "tmp" / sub).mkdir(parents=True, exist_ok=True)
    return _COMMON.format(workers=workers, dir=directory, body=body)


def floor_conf(directory: Path, port: int, upstream: str, workers: int) -> str:
    """GET /city/v1/get?id=I&language=L -> GET <upstream>/city/_doc/I?_source_includes=<the city fields>,
    over kept-alive upstream connections: the one hop every service makes, and nothing else."""
    host = upstream.split("://", 1)[1].rstrip("/")
    body = f"""  upstream backend {{ server {host}; keepalive 256; }}
  server {{
    listen 127.0.0.1:{port} backlog=4096;
    location = /city/v1/get {{
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_pass http://backend/city/_doc/$arg_id?_source_includes={CITY_FIELDS};
    }}
    location / {{ return 404 '{{"message":"Not Found: no such resource."}}'; }}
  }}"""
    return _render(directory, workers, body)


def static_conf(directory: Path, port: int, docs: Path, workers: int) -> str:
    """Files under docs/plain (docs/compat a symlink to it). Elasticsearch's answers from files:
    /_cluster/health, /city|region/_doc/<id> (query strings ignored), the X-elastic-product header,
    and the media type the client asked for (ES 8 echoes `compatible-with=8` to clients that send
    it); a missing document is ES's plain 404."""
    body = f"""  map $http_accept $es_compat {{ default 0; "~compatible-with=8" 1; }}
  server {{
    listen 127.0.0.1:{port} backlog=4096;
    root {docs}/plain;
    default_type application/json;
    add_header X-elastic-product Elasticsearch always;
    location = /_cluster/health {{
      if ($es_compat) {{ rewrite ^ /compat/_cluster_health last; }}
      try_files /_cluster_health =500;
    }}
    location ~ ^/(city|region)/_doc/(\\d+)$ {{
      set $es_index $1_v1;
      set $es_id $2;
      if ($es_compat) {{ rewrite ^/(\\w+)/_doc/(\\d+)$ /compat/$1/$2 last; }}
      try_files /$1/$2 @missing;
    }}
    location /compat/ {{
      internal;
      root {docs};  # {docs}/compat is a symlink to {docs}/plain
      default_type "application/vnd.elasticsearch+json;compatible-with=8";
      add_header X-elastic-product Elasticsearch always;
      try_files $uri @missing;
    }}
    location @missing {{
      add_header X-elastic-product Elasticsearch always;
      return 404 '{{"_index":"$es_index","_id":"$es_id","found":false}}';
    }}
  }}"""
    return _render(directory, workers, body)
