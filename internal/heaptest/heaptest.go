// Package heaptest measures the live Go heap for the tests that bound
// what a structure holds per item: the heap after a collection, before
// and after the items, divided by their number.
package heaptest

import "runtime"

// Live collects garbage twice (what a finalizer freed goes in the
// second) and returns the bytes of heap objects still reachable.
func Live() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
