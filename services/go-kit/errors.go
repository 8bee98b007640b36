package main

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/cityref/cityref/services/go-kit/generated/models"
)

// AppError is every non-2xx answer of the service: a status and the contract's fixed message
// (never raw request input). It implements go-kit's httptransport.StatusCoder and
// httptransport.Headerer, which encodeError uses.
type AppError struct {
	Status  int
	Message string
}

func (e *AppError) Error() string   { return e.Message }
func (e *AppError) StatusCode() int { return e.Status }

// Headers: a 405 names the methods a listed path allows.
func (e *AppError) Headers() http.Header {
	if e.Status == http.StatusMethodNotAllowed {
		return http.Header{"Allow": {"GET, HEAD"}}
	}
	return nil
}

// Body is the generated Error model the error encoder renders.
func (e *AppError) Body() models.Error { return models.Error{Message: e.Message} }

// The contract's status/message table (spec/openapi.yaml, "Wire format").
var (
	errNoSuchResource   = &AppError{http.StatusNotFound, "Not Found: no such resource."}
	errMethodNotAllowed = &AppError{http.StatusMethodNotAllowed, "Method Not Allowed: use GET."}
	errURITooLong       = &AppError{http.StatusRequestURITooLong, "URI Too Long: request target exceeds 8192 bytes."}
	errUnavailable      = &AppError{http.StatusServiceUnavailable, "Service Unavailable: search backend unavailable."}
	errTimeout          = &AppError{http.StatusGatewayTimeout, "Gateway Timeout: search backend timed out."}
)

// errBadRequest: every parameter problem, id first, joined by "; ".
func errBadRequest(problems []string) *AppError {
	return &AppError{http.StatusBadRequest, "Bad Request: " + strings.Join(problems, "; ")}
}

func errCityNotFound(id int64) *AppError {
	return &AppError{http.StatusNotFound, fmt.Sprintf("Not Found: City#%d not found.", id)}
}

func errCityMalformed(id int64) *AppError {
	return &AppError{http.StatusInternalServerError, fmt.Sprintf("Internal Server Error: City#%d is malformed.", id)}
}

func errCityNameMissing(id int64, language models.Language) *AppError {
	return &AppError{http.StatusInternalServerError,
		fmt.Sprintf("Internal Server Error: City#%d has no name in '%s'.", id, language)}
}

func errRegionNotFound(regionID, cityID int64) *AppError {
	return &AppError{http.StatusInternalServerError,
		fmt.Sprintf("Internal Server Error: Region#%d of City#%d not found.", regionID, cityID)}
}

func errRegionNameMissing(regionID int64, language models.Language) *AppError {
	return &AppError{http.StatusInternalServerError,
		fmt.Sprintf("Internal Server Error: Region#%d has no name in '%s'.", regionID, language)}
}
