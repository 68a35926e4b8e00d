// Package informer feeds the node inventory (package inventory) from a
// controller-runtime manager: one metadata-only informer on Nodes whose
// events set and delete nodes in an [inventory.Inventory] and an
// [inventory.Emulators]. Its cache keeps each node's labels, with their
// strings shared among nodes, and only isamatch's annotations
// ([NodeTransform]).
//
// The entry points are [Setup] and [SetupEmulators]; the informer starts
// with the manager. The inventory itself links no client, so tools that
// decide offline (kubectl isa) use it without this package.
package informer
