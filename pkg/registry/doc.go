// Package registry resolves container image references to the platforms they
// are built for, with the credentials a pod would pull them with. The entry
// point is [NewResolver] and its [Resolver.Resolve] method; failures are
// classified as [*Error] values whose Kind names what went wrong.
package registry
