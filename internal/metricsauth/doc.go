// Package metricsauth guards the metrics servers of the isamatch binaries:
// a caller's bearer token is authenticated by the API server (TokenReview)
// for a dedicated audience ([DefaultAudience]: a token for the API server
// itself is refused) and the caller authorised for the request's path and verb
// (SubjectAccessReview). The entry point is
// [FilterProvider], a FilterProvider for
// controller-runtime's metrics server.
//
// It answers as controller-runtime's pkg/metrics/filters does (401 without
// a token the API server accepts, 403 when the review denies, 500 when the
// API server cannot be asked) but through client-go's typed clients only:
// controller-runtime's filter builds on k8s.io/apiserver's delegating
// authenticator and authoriser, which link k8s.io/apiserver, grpc, cel-go
// and OpenTelemetry into a binary that only needs two API calls (about
// 20 MB of the labeler's binary and 20 MiB of its resident memory).
//
// Answers are cached as the apiserver's delegating defaults do, so a scrape
// every 15 to 30 seconds costs no API call once warm: an accepted token for
// two minutes, a rejected one for ten seconds, an allowed review for five
// minutes, a denied one for thirty seconds; errors are never cached. Each
// cache holds at most [CacheEntries] entries (least recently used evicted)
// and is keyed by a keyed hash, never by the token itself. Reviews that
// reject a token are rate-limited (a burst of 10, then one a second):
// past that, an unknown token gets 429 without a review.
package metricsauth
