// Package registry resolves container image references to the platforms they
// are built for, with the credentials a pod would pull them with. The entry
// point is [NewResolver] and its [Resolver.Resolve] method; failures are
// classified as [*Error] values whose Kind names what went wrong.
//
// An image index gives its platforms (attestation manifests and
// unknown/unknown entries skipped); a single manifest gives its config's
// os/architecture/variant. Each platform carries its image config's
// "isa.request" label and its manifest digest; [Resolver.Image] reads one
// platform's image (for its layers, pkg/imageisa) with the same
// credentials and transport. Results are cached per (normalised reference,
// credential identity) for [WithTTL] (digest-pinned references for
// [WithDigestTTL], failures for [WithErrorTTL]). A resolution first HEADs
// the manifest with the caller's credentials; the platforms of its digest
// are shared across credentials for [WithDigestTTL] ([WithMaxDigestCacheBytes]),
// so another tenant's resolution of the same image costs that one HEAD
// and no GET, and a tenant whose HEAD fails gets its own error. Concurrent
// lookups of the same key share one registry resolution, which runs under its own
// [WithFetchTimeout] while each caller returns when its own context ends.
// The cache is an LRU bounded in bytes ([WithMaxCacheBytes]). Every
// registry HTTP request goes through one bounded transport: plain HTTP only
// to [WithInsecureRegistries] hosts; a slot of the namespace
// ([WithMaxPerNamespace]), of the registry host ([WithMaxPerHost]) and of
// the global pool ([WithMaxConcurrent]); responses capped at
// [WithMaxManifestBytes] and, per image, [WithResolutionBudget]. The
// default dialler refuses non-public addresses after DNS resolution unless
// [WithAllowedRegistries] allows them. Errors keep a kind and a short
// message made printable by sanitize.Line, never a response body. Credentials come from a [KeychainFactory], usually
// [KubernetesKeychain] (the pod's imagePullSecrets and its ServiceAccount's,
// then anonymous), followed by the credentials every pod shares
// ([WithNodeKeychain]): [CredentialProviders] runs the kubelet's image
// credential provider plugins (ECR, GCR/Artifact Registry, ACR) from the
// kubelet's own CredentialProviderConfig, with their answers cached and
// every run bounded in time and output. [Metrics] counts cache hits and misses, digest cache
// hits, registry requests and errors by kind.
package registry
