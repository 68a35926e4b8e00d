// Package registry resolves container image references to the platforms they
// are built for, with the credentials a pod would pull them with. The entry
// point is [NewResolver], configured by one [Options] value (its zero value
// resolves anonymously from public registries; [Options.Validate] names a
// bad field), and its [Resolver.Resolve] method; failures are classified as
// [*Error] values whose Kind names what went wrong.
//
// An image index gives its platforms (attestation manifests and
// unknown/unknown entries skipped); a single manifest gives its config's
// os/architecture/variant. Each platform carries its image config's
// "isa.request" label and its manifest digest; [Resolver.Image] reads one
// platform's image (for its layers, pkg/imageisa) with the same
// credentials and transport. Results are cached per (normalised reference,
// credential identity) for Options.TTL (digest-pinned references for a
// day, failures for 10 seconds). A resolution first HEADs the manifest
// with the caller's credentials; the platforms of its digest are shared
// across credentials (Options.MaxDigestCacheBytes), so another tenant's
// resolution of the same image costs that one HEAD and no GET, and a
// tenant whose HEAD fails gets its own error. Concurrent lookups of the
// same key share one registry resolution, which runs under its own fetch
// timeout while each caller returns when its own context ends. The cache
// is an LRU bounded in bytes (Options.MaxCacheBytes). Every registry HTTP
// request goes through one bounded transport: plain HTTP only to
// Options.InsecureRegistries; a slot of the namespace
// (Options.MaxPerNamespace), of the registry host (Options.MaxPerHost) and
// of the global pool; responses capped in size and, per image, by
// Options.MaxResolutionBytes. The default dialler (package netguard)
// refuses non-public addresses after DNS resolution unless
// Options.AllowedRegistries allows them. Mirrors come from Options.Mirrors
// (one per registry) or a containerd hosts directory read by
// [ReadHostsDir] (Options.Hosts: several hosts per registry, tried in
// order, then the server). A 429 answer's Retry-After keeps every request
// to that host failing at once with kind rateLimited until it passes
// (at most [MaxRetryAfter]); nothing waits for it. Errors keep a kind and a short
// message made printable by sanitize.Line, never a response body.
// Credentials come from a [KeychainFactory], usually [KubernetesKeychain]
// (the pod's imagePullSecrets and its ServiceAccount's, then anonymous),
// followed by the credentials every pod shares (Options.NodeKeychain,
// usually the kubelet's image credential provider plugins of package
// credprov). [Metrics] counts cache hits and misses, digest cache hits,
// registry requests and errors by kind (rateLimited apart).
package registry
