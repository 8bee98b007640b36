package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/elastic/go-elasticsearch/v8"
	"github.com/elastic/go-elasticsearch/v8/esapi"
	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/cityref/cityref/services/go-kit/generated/models"
)

const (
	cityAlias   = "city"
	regionAlias = "region"
	// maxConnections bounds the requests in flight to Elasticsearch (README: sized by measurement).
	maxConnections = 64
)

// regionFields: a region is cached for every language, so all its names are fetched (and
// nothing else: its geometry can be large).
var regionFields = []string{"name.cs", "name.de", "name.en", "name.pl", "name.sk"}

// Source is a document's _source: GoOut's flat dotted keys ("name.en") to raw JSON values.
type Source map[string]json.RawMessage

// CityLookup reads cities and regions by id: what the CityService depends on (the
// CityRepository; a fake in the service's tests). A nil Source with a nil error is a plain
// not-found; errors are *AppError (503 or 504).
type CityLookup interface {
	City(ctx context.Context, id int64, language models.Language) (Source, error)
	Region(ctx context.Context, id int64) (Source, error)
}

// CityRepository is the CityLookup on the official Elasticsearch client, with the
// regions that were found cached for the life of the process (misses and failures never).
type CityRepository struct {
	client     *elasticsearch.BaseClient
	instrument esapi.Instrumentation // nil: requests are not traced
	timeout    time.Duration
	regions    sync.Map // int64 → Source
	logger     log.Logger
}

// NewCityRepository: every round-trip (connect through reading the body) must finish
// within timeout. instrumentation is the client's OpenTelemetry instrumentation (nil when
// tracing is off): it spans every request, as the client's functional API would.
func NewCityRepository(u *url.URL, timeout time.Duration, logger log.Logger, instrumentation esapi.Instrumentation) (*CityRepository, error) {
	client, err := newElasticsearchClient(u, instrumentation)
	if err != nil {
		return nil, err
	}
	return &CityRepository{client: client, instrument: client.InstrumentationEnabled(), timeout: timeout, logger: logger}, nil
}

// newElasticsearchClient is the official client without its functional API: requests are
// esapi request values run with Do. elasticsearch.NewClient would link every one of the
// client's hundreds of API functions into the binary (a 24.9 MB binary instead of 11.4 MB).
// esapi request values, unlike the functional API, carry the instrumentation themselves
// (Instrument), so every request below is given the client's.
func newElasticsearchClient(u *url.URL, instrumentation esapi.Instrumentation) (*elasticsearch.BaseClient, error) {
	base := *u
	base.User = nil // credentials go in a header, never into request URLs or error texts
	header := http.Header{}
	if u.User != nil {
		// Not Config.Username/Password: the client sends those only when both are non-empty.
		password, _ := u.User.Password()
		credentials := base64.StdEncoding.EncodeToString([]byte(u.User.Username() + ":" + password))
		header.Set("Authorization", "Basic "+credentials)
	}
	return elasticsearch.NewBaseClient(elasticsearch.Config{
		Addresses: []string{base.String()},
		Header:    header,
		// One request per lookup: a failure is answered (503/504), never retried, so that
		// "no answer within ELASTICSEARCH_TIMEOUT_MS" stays one timeout, not four.
		DisableRetry:    true,
		Instrumentation: instrumentation,
		Transport: &http.Transport{
			Proxy:       nil, // Elasticsearch directly, whatever HTTP_PROXY says
			DialContext: (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext,
			// The spec's bound on requests in flight: beyond it a request waits for a pooled
			// connection, inside its context's deadline (ELASTICSEARCH_TIMEOUT_MS covers the wait).
			MaxConnsPerHost:     maxConnections,
			MaxIdleConns:        maxConnections,
			MaxIdleConnsPerHost: maxConnections, // net/http keeps only 2 by default: churn under load
			IdleConnTimeout:     90 * time.Second,
			// Uncompressed answers (spec): net/http would otherwise ask for gzip and inflate every
			// few-hundred-byte answer.
			DisableCompression: true,
		},
	})
}

// CheckHealth is the startup round-trip: GET /_cluster/health must answer 2xx. It is also the
// client's first 2xx answer, so the product check (X-Elastic-Product: Elasticsearch) runs here.
func (r *CityRepository) CheckHealth(ctx context.Context) error {
	res, err := esapi.ClusterHealthRequest{Instrument: r.instrument}.Do(ctx, r.client)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if _, err := io.Copy(io.Discard, res.Body); err != nil {
		return err
	}
	if res.IsError() {
		return fmt.Errorf("GET /_cluster/health answered %s", res.Status())
	}
	return nil
}

// City: its scalar fields and its name in language; never geometry or population.
func (r *CityRepository) City(ctx context.Context, id int64, language models.Language) (Source, error) {
	return r.source(ctx, cityAlias, id, []string{"id", "countryIso", "isFeatured", "regionId", "name." + string(language)})
}

// Region: its names, from the cache or else from Elasticsearch.
func (r *CityRepository) Region(ctx context.Context, id int64) (Source, error) {
	if cached, ok := r.regions.Load(id); ok {
		return cached.(Source), nil
	}
	region, err := r.source(ctx, regionAlias, id, regionFields)
	if err != nil || region == nil {
		return nil, err
	}
	r.regions.Store(id, region)
	return region, nil
}

// getResponse is the part of a GET <index>/_doc/<id> answer that is read.
type getResponse struct {
	Found  *bool           `json:"found"`
	Source json.RawMessage `json:"_source"`
}

// source is GET /<alias>/_doc/<id>?_source_includes=<fields>: the _source of a found document,
// nil for a plain not-found (404, "found":false), errUnavailable for any other answer
// (429, 5xx, a 404 index_not_found_exception, a 200 that is not a document) or a refused or
// reset connection, errTimeout when no answer came within the timeout.
func (r *CityRepository) source(ctx context.Context, alias string, id int64, fields []string) (Source, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	docID := strconv.FormatInt(id, 10)
	res, err := esapi.GetRequest{Index: alias, DocumentID: docID, SourceIncludes: fields, Instrument: r.instrument}.Do(ctx, r.client)
	if err != nil {
		return nil, r.backendError(ctx, alias, docID, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, r.backendError(ctx, alias, docID, err)
	}
	var doc getResponse
	if res.StatusCode == http.StatusOK || res.StatusCode == http.StatusNotFound {
		if err := json.Unmarshal(body, &doc); err == nil && doc.Found != nil {
			var source Source
			switch {
			case res.StatusCode == http.StatusNotFound && !*doc.Found:
				return nil, nil
			case res.StatusCode == http.StatusOK && *doc.Found &&
				json.Unmarshal(doc.Source, &source) == nil && source != nil:
				return source, nil
			}
		}
	}
	level.Warn(r.logger).Log("msg", "Elasticsearch answered neither a document nor a plain not-found",
		"request", "GET "+alias+"/_doc/"+docID, "status", res.StatusCode)
	return nil, errUnavailable
}

// backendError: no answer before the deadline is a timeout (504); anything else (refused,
// reset, an unreadable answer, the product check failing) is "unavailable" (503).
func (r *CityRepository) backendError(ctx context.Context, alias, docID string, err error) error {
	request := "GET " + alias + "/_doc/" + docID
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		level.Warn(r.logger).Log("msg", "Elasticsearch timed out", "request", request, "error", err)
		return errTimeout
	}
	level.Warn(r.logger).Log("msg", "Elasticsearch unavailable", "request", request, "error", err)
	return errUnavailable
}
