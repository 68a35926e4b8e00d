// Package netguard keeps image references, which pod creators choose, from
// making the webhook connect where it must not: [New] returns a [Guard]
// whose [Guard.DialContext] refuses, after DNS resolution and before
// connect, every address of the IANA special-purpose registries, cloud
// metadata services and the cluster's own pod and Service networks, unless
// the operator allowed the registry ([Options]). A refusal wraps
// [ErrRefused] and names the block the address is in.
package netguard
