// Package credprov runs the kubelet's image credential provider plugins
// (ecr-credential-provider, gcp-credential-provider, acr-credential-provider
// ...) from the kubelet's own CredentialProviderConfig, so the webhook reads
// images with the credentials a node would pull them with. The entry point
// is [New], configured by one [Options] value; the [Keychain] it returns is
// an authn.Keychain for registry.Options.NodeKeychain. Answers are cached
// per the plugin's cacheKeyType and cacheDuration, bounded in entries and
// bytes with a quarter per namespace; every run is bounded in time, output
// and concurrency (in all and per namespace), and its whole process group
// is killed when it ends. [Metrics] counts runs, their duration and cache
// hits.
package credprov
