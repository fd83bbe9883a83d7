package sessionstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
)

// LongTests reports whether DSH_LONG_TESTS is set, as run-tests.sh (CI)
// does: the randomised and race tests then run their full number of
// rounds, which only raises the odds of meeting a rare case; without it
// they run fewer, still covering every kind of change, so that a
// developer's `go test ./...` stays quick.
func LongTests() bool { return os.Getenv("DSH_LONG_TESTS") != "" }

// hashTree is treeHash for the external test package.
func HashTreeForTest(t testing.TB, root string) string { return treeHash(t, root) }

// testExits run after all tests, in TestMain.
var testExits []func()

// AtTestExit runs f when the test binary's tests have all finished (for
// what outlives one test, such as a binary built once for several).
func AtTestExit(f func()) { testExits = append(testExits, f) }

// OpenWaited opens an index over root with opts, closed when the test
// ends, and waits for its first pass.
func OpenWaited(t testing.TB, root string, opts IndexOptions) *Indexed {
	t.Helper()
	x, err := OpenIndexed(root, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	if err := x.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	return x
}

// KindOf returns the class of err, or 0 when err is not a store *Error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}

// Open returns a Store over root that detects the encoding from the files
// present (zstd when any session.jsonl.zstd exists, else raw). The root
// need not exist yet (a missing root lists no sessions).
func Open(root string) (*Store, error) { return OpenWith(root, Options{}) }

// OpenEncoding returns a Store that reads only enc's transcripts (dsh's
// compression setting); sessions in the other encoding are reported as
// problems.
func OpenEncoding(root string, enc Encoding) (*Store, error) {
	if enc != Raw && enc != Zstd {
		return nil, fmt.Errorf("sessionstore: unknown encoding %d", enc)
	}
	return OpenWith(root, Options{Encoding: enc})
}
