"""The Prometheus text parser."""

import math

import pytest

from conformance import metrics

TEXT = """# HELP http_server_request_duration_seconds Duration of HTTP server requests.
# TYPE http_server_request_duration_seconds histogram
http_server_request_duration_seconds_bucket{http_request_method="GET",http_response_status_code="200",http_route="/city/v1/get",le="0.005"} 3
http_server_request_duration_seconds_bucket{http_request_method="GET",http_response_status_code="200",http_route="/city/v1/get",le="+Inf"} 4
http_server_request_duration_seconds_sum{http_request_method="GET",http_response_status_code="200",http_route="/city/v1/get"} 0.0123
http_server_request_duration_seconds_count{http_request_method="GET",http_response_status_code="200",http_route="/city/v1/get"} 4
http_server_request_duration_seconds_count{http_request_method="GET",http_response_status_code="404",http_route=""} 2 1700000000000
http_server_request_duration_seconds_count{http_request_method="GET",http_response_status_code="404"} 1
weird{a="x\\"y\\\\z\\n",b="1"} NaN
"""


def test_parse_types_and_samples():
    e = metrics.parse(TEXT)
    assert e.types == {"http_server_request_duration_seconds": "histogram"}
    assert len(e.samples) == 7
    assert (
        e.value(
            "http_server_request_duration_seconds_count",
            {"http_request_method": "GET", "http_response_status_code": "200", "http_route": "/city/v1/get"},
        )
        == 4
    )


def test_empty_route_matches_absent_label():
    e = metrics.parse(TEXT)
    labels = {"http_request_method": "GET", "http_response_status_code": "404", "http_route": ""}
    assert e.value("http_server_request_duration_seconds_count", labels) == 2
    assert e.value("http_server_request_duration_seconds_count", labels, missing_label_as_empty=True) == 3


def test_escapes_and_special_values():
    e = metrics.parse(TEXT)
    ((lbl, v),) = e.find("weird")
    assert lbl == {"a": 'x"y\\z\n', "b": "1"} and math.isnan(v)
    assert metrics.parse_value("+Inf") == math.inf


def test_bucket_bounds():
    assert metrics.bucket_bounds(metrics.parse(TEXT), "http_server_request_duration_seconds") == {0.005, math.inf}


@pytest.mark.parametrize("bad", ['x{a="1"', "x{a=1} 2", "x", 'x{a="1",a="2"} 1', "x 1 2 3"])
def test_malformed(bad):
    with pytest.raises(metrics.ParseError):
        metrics.parse(bad)
