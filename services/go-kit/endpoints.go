package main

import (
	"bytes"
	"context"

	"github.com/go-kit/kit/endpoint"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/cityref/cityref/services/go-kit/generated/models"
)

// Endpoints are go-kit's transport-independent adapters, one per operation of the contract.
type Endpoints struct {
	GetCity endpoint.Endpoint // getCity: getCityRequest → getCityResponse
	Health  endpoint.Endpoint // getHealth: nothing → models.Health
	APIDocs endpoint.Endpoint // getApiDocs: nothing → rawResponse (spec/openapi.json)
	Metrics endpoint.Endpoint // getMetrics: nothing → rawResponse (Prometheus text)
}

// rawResponse is a body that is already encoded.
type rawResponse struct {
	ContentType string
	Body        []byte
}

// metricsContentType is the Prometheus text exposition format 0.0.4.
const metricsContentType = "text/plain; version=0.0.4; charset=utf-8"

// MakeEndpoints wires the service, the contract document and the metrics registry.
func MakeEndpoints(s CityService, apiDocs []byte, gatherer prometheus.Gatherer) Endpoints {
	return Endpoints{
		GetCity: MakeGetCityEndpoint(s),
		Health:  MakeHealthEndpoint(),
		APIDocs: MakeAPIDocsEndpoint(apiDocs),
		Metrics: MakeMetricsEndpoint(gatherer),
	}
}

// getCityResponse is getCity's answer: the city, or the error the service returned (a 404 or a
// 5xx AppError). It is an endpoint.Failer, as go-kit's addsvc responses are: a business error
// travels in the response and the transport's encoder answers it, so that the endpoint's own error
// (which endpoint middleware such as a circuit breaker counts) means a failure of the endpoint.
type getCityResponse struct {
	City models.City
	Err  error
}

// Failed implements endpoint.Failer.
func (r getCityResponse) Failed() error { return r.Err }

func MakeGetCityEndpoint(s CityService) endpoint.Endpoint {
	return func(ctx context.Context, request interface{}) (interface{}, error) {
		req := request.(getCityRequest)
		city, err := s.GetCity(ctx, req.ID, req.Language)
		return getCityResponse{City: city, Err: err}, nil
	}
}

func MakeHealthEndpoint() endpoint.Endpoint {
	return func(context.Context, interface{}) (interface{}, error) {
		return models.Health{Status: "UP"}, nil
	}
}

func MakeAPIDocsEndpoint(document []byte) endpoint.Endpoint {
	return func(context.Context, interface{}) (interface{}, error) {
		return rawResponse{ContentType: "application/json", Body: document}, nil
	}
}

// MakeMetricsEndpoint renders the registry in the text format into a buffer (rather than
// promhttp streaming it) so that the answer has a Content-Length, which HEAD needs.
func MakeMetricsEndpoint(gatherer prometheus.Gatherer) endpoint.Endpoint {
	return func(context.Context, interface{}) (interface{}, error) {
		families, err := gatherer.Gather()
		if err != nil {
			return nil, err
		}
		var text bytes.Buffer
		for _, family := range families {
			if _, err := expfmt.MetricFamilyToText(&text, family); err != nil {
				return nil, err
			}
		}
		return rawResponse{ContentType: metricsContentType, Body: text.Bytes()}, nil
	}
}
