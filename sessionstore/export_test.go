package sessionstore

import "testing"

// hashTree is treeHash for the external test package.
func HashTreeForTest(t testing.TB, root string) string { return treeHash(t, root) }
