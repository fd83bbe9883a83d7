package transcript

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/internal/binenc"
	"github.com/dsh-lsp/dsh-lsp/internal/binenc/binenctest"
)

func TestFoldStateEncodingRoundTrips(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		var s FoldState
		binenctest.Fill(rng, &s)
		b := s.AppendBinary([]byte("prefix"))
		r := binenc.NewReader(b[len("prefix"):])
		got := ReadFoldState(r)
		if r.Err() != nil || r.Len() != 0 {
			t.Fatalf("case %d: read error %v, %d bytes left", i, r.Err(), r.Len())
		}
		if !reflect.DeepEqual(got, s) {
			t.Fatalf("case %d: round trip differs:\n got %#v\nwant %#v", i, got, s)
		}
	}
}

func TestFoldStateEncodingRejectsEveryTruncation(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		var s FoldState
		binenctest.Fill(rng, &s)
		b := s.AppendBinary(nil)
		for n := range len(b) {
			r := binenc.NewReader(b[:n])
			ReadFoldState(r)
			if r.Err() == nil {
				t.Fatalf("a %d-byte encoding cut to %d bytes read without error", len(b), n)
			}
		}
	}
}

func FuzzReadFoldState(f *testing.F) {
	var s FoldState
	binenctest.Fill(rand.New(rand.NewPCG(5, 6)), &s)
	f.Add(s.AppendBinary(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := binenc.NewReader(b)
		got := ReadFoldState(r)
		if r.Err() != nil {
			return
		}
		again := binenc.NewReader(got.AppendBinary(nil))
		if back := ReadFoldState(again); again.Err() != nil || !reflect.DeepEqual(back, got) {
			t.Fatalf("a state read from bytes does not round trip")
		}
	})
}
