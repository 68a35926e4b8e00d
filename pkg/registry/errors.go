package registry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// The kinds of [Error].
const (
	KindUnauthorized = "unauthorized"
	KindForbidden    = "forbidden"
	KindNotFound     = "notFound"
	KindTimeout      = "timeout"
	KindUnreachable  = "unreachable"
	KindMalformed    = "malformed"
	KindTooLarge     = "tooLarge"
	KindOther        = "other"
)

// errTooLarge marks a registry response over the configured size limit.
var errTooLarge = errors.New("registry response too large")

// errMalformed marks content that parsed but does not describe an image.
var errMalformed = errors.New("malformed image")

// classify wraps err in an *Error with the kind that describes it best.
func classify(ref string, err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Kind: kindOf(err), Ref: ref, Err: err}
}

func kindOf(err error) string {
	if errors.Is(err, errTooLarge) {
		return KindTooLarge
	}
	if errors.Is(err, errMalformed) || errors.Is(err, remote.ErrSchema1) {
		return KindMalformed
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || errors.Is(err, os.ErrDeadlineExceeded) {
		return KindTimeout
	}
	// Certificate problems first: for a loopback or insecure registry the
	// HTTPS failure comes with a less telling plain-HTTP fallback failure.
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var verify *tls.CertificateVerificationError
	if errors.As(err, &unknownCA) || errors.As(err, &hostname) || errors.As(err, &verify) {
		return KindUnreachable
	}
	var te *transport.Error
	if errors.As(err, &te) {
		return kindOfStatus(te)
	}
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syntax) || errors.As(err, &typ) {
		return KindMalformed
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return KindTimeout
	}
	var op *net.OpError
	var dns *net.DNSError
	if errors.As(err, &op) || errors.As(err, &dns) {
		return KindUnreachable
	}
	return KindOther
}

func kindOfStatus(te *transport.Error) string {
	for _, d := range te.Errors {
		switch d.Code {
		case transport.UnauthorizedErrorCode:
			return KindUnauthorized
		case transport.DeniedErrorCode:
			return KindForbidden
		case transport.ManifestUnknownErrorCode, transport.NameUnknownErrorCode, transport.BlobUnknownErrorCode:
			return KindNotFound
		case transport.ManifestInvalidErrorCode:
			return KindMalformed
		}
	}
	switch te.StatusCode {
	case http.StatusUnauthorized:
		return KindUnauthorized
	case http.StatusForbidden:
		return KindForbidden
	case http.StatusNotFound:
		return KindNotFound
	case http.StatusRequestTimeout, http.StatusGatewayTimeout:
		return KindTimeout
	case http.StatusBadGateway, http.StatusServiceUnavailable:
		return KindUnreachable
	}
	return KindOther
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errMalformed, fmt.Sprintf(format, args...))
}
