// Package slots bounds concurrent work of the registry packages: a [Pool]
// of slots in all, [Keyed] slots per registry host or namespace, taken in
// one order by [AcquireAll], and the namespace a piece of work is charged
// to ([WithNamespace]). A wait that ends wraps [ErrWait]. It is internal to
// pkg/registry: the resolver and the credential providers share it.
package slots
