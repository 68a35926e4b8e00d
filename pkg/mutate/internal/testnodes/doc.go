// Package testnodes is what the tests of the decision engine and of the
// admission adapter share: test clusters' node labels ([Labels],
// [Paper]) and the scheduler's node-affinity semantics written out
// ([Admits], [Placement]), so that a test can check where a decision lets a
// pod run. It imports no test framework.
package testnodes
