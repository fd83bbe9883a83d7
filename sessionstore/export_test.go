package sessionstore

import "testing"

// hashTree is treeHash for the external test package.
func HashTreeForTest(t testing.TB, root string) string { return treeHash(t, root) }

// testExits run after all tests, in TestMain.
var testExits []func()

// AtTestExit runs f when the test binary's tests have all finished (for
// what outlives one test, such as a binary built once for several).
func AtTestExit(f func()) { testExits = append(testExits, f) }
