"""Validation of one response against spec/openapi.yaml with openapi-core.

* A listed path and GET: the operation's response (status documented, media type, schema,
  documented headers).
* A listed path and another method: validated as a response of that path's GET operation, which
  is where the spec documents 405 (with its ``Allow`` header) and 414.
* HEAD on a listed path: status documented for GET, media type of that status; no body.
* Any other path (not an operation of the spec): the body must be the ``Error`` schema and the
  Content-Type ``application/json`` (HEAD: no body).
"""

from __future__ import annotations

import functools
import json
import pathlib

import yaml
from jsonschema_path import SchemaPath
from openapi_core import OpenAPI
from openapi_core.testing import MockRequest, MockResponse
from openapi_schema_validator import OAS31Validator

from cityref_tools import resources
from conformance.rawhttp import Response

SPEC_FILE = resources.path("spec/openapi.yaml")
HOST_URL = "http://127.0.0.1:8080"  # the spec's server; responses are validated as if from there


def media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


class SpecValidator:
    def __init__(self, spec_file: pathlib.Path = SPEC_FILE):
        self.doc = yaml.safe_load(spec_file.read_text(encoding="utf-8"))
        self.openapi = OpenAPI(SchemaPath.from_dict(self.doc))
        error_schema = dict(self.doc["components"]["schemas"]["Error"])
        self.error_validator = OAS31Validator(error_schema)

    @functools.cached_property
    def paths(self) -> set[str]:
        return set(self.doc["paths"])

    def _get_responses(self, path: str) -> dict:
        responses = self.doc["paths"][path]["get"]["responses"]
        out = {}
        for status, resp in responses.items():
            if "$ref" in resp:
                name = resp["$ref"].rsplit("/", 1)[-1]
                resp = self.doc["components"]["responses"][name]
            out[status] = resp
        return out

    def validate(self, method: str, target: bytes | str, resp: Response) -> list[str]:
        """Problems found (empty list: the response conforms)."""
        if isinstance(target, bytes):
            target = target.decode("ascii")
        path = target.split("?", 1)[0]
        method = method.upper()
        ctype = resp.content_type
        errors: list[str] = []
        if path not in self.paths:
            if ctype != "application/json":
                errors.append(f"Content-Type {ctype!r}, want application/json (Error)")
            if method != "HEAD":
                errors += self._error_body(resp.body)
            return errors
        if method == "HEAD":
            documented = self._get_responses(path)
            entry = documented.get(str(resp.status))
            if entry is None:
                return [f"status {resp.status} is not documented for GET {path} (HEAD answers like GET)"]
            medias = list((entry.get("content") or {}).keys())
            if medias and media_type(ctype) not in medias:
                errors.append(f"Content-Type {ctype!r} is not one of the documented {medias}")
            return errors
        documented = self._get_responses(path).get(str(resp.status)) or {}
        for name in documented.get("headers") or {}:
            if resp.header(name) is None:
                errors.append(f"header {name} missing (documented for {resp.status} on {path})")
        if (
            "application/json" in (documented.get("content") or {})
            and ctype != "application/json"
            and media_type(ctype) == "application/json"
        ):
            errors.append(f"Content-Type {ctype!r}: JSON responses carry exactly 'application/json'")
        request = MockRequest(HOST_URL, "get", path)
        headers = {}
        for k, v in resp.headers:
            headers.setdefault(k, v)
        response = MockResponse(resp.body, status_code=resp.status, headers=headers, content_type=(ctype or "").lower())
        try:
            self.openapi.validate_response(request, response)
        except Exception as e:  # openapi-core raises a family of exceptions; all mean "does not conform"
            errors.append(describe(e))
        return errors

    def _error_body(self, body: bytes) -> list[str]:
        try:
            obj = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            return [f"body is not JSON ({e}): {body[:200]!r}"]
        return [f"body does not match the Error schema: {err.message}" for err in self.error_validator.iter_errors(obj)]


def describe(exc: BaseException) -> str:
    """The innermost cause of an openapi-core exception and its schema errors, on one or a few lines."""
    chain, cur = [], exc
    while cur is not None and cur not in chain:
        chain.append(cur)
        cur = cur.__cause__ or cur.__context__
    inner = chain[-1]
    lines = [f"{type(exc).__name__}: {str(inner).split(': (<ValidationError', 1)[0]}"]
    for e in chain:
        for err in getattr(e, "schema_errors", None) or []:
            lines.append(f"  - {getattr(err, 'message', err)}")
    return "\n".join(dict.fromkeys(lines))
