package reference

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// benchSurface is a source of n messages of about textBytes each: users and
// assistants alternating, a checkpoint every 500 messages, 10% multibyte.
func benchSurface(n, textBytes int) *Surface {
	rng := rand.New(rand.NewPCG(7, uint64(n)))
	seq := int64(n)
	cwd := "/home/bench/proj"
	s := &Surface{Header: SessionHeader{ID: "bench", CWD: &cwd}, CapturedThroughSeq: &seq}
	for i := range n {
		var sb strings.Builder
		for sb.Len() < textBytes {
			if rng.IntN(10) == 0 {
				sb.WriteString("界🙂<\n")
			} else {
				sb.WriteString("lorem ipsum dolor sit amet ")
			}
		}
		switch {
		case i%500 == 499:
			s.Events = append(s.Events, userEvent(int64(i), "plugin", "compact", sb.String()))
		case i%2 == 0:
			s.Events = append(s.Events, userEvent(int64(i), "user", "", sb.String()))
		default:
			s.Events = append(s.Events, assistantEvent(int64(i), sb.String()))
		}
	}
	return s
}

func surfaceBytes(s *Surface) int64 {
	var n int64
	for _, ev := range s.Events {
		n += int64(len(ev.Data))
	}
	return n
}

// BenchmarkRetain retains sources of growing size into the default budget
// (65536 bytes), projection included. Time per op should grow linearly with
// the source bytes (compare MB/s across sizes).
func BenchmarkRetain(b *testing.B) {
	for _, size := range []struct{ messages, textBytes int }{
		{1_000, 200}, {10_000, 200}, {100_000, 200}, {20_000, 1_000}, // the last one is 20 MB
	} {
		s := benchSurface(size.messages, size.textBytes)
		b.Run(fmt.Sprintf("messages=%d/text=%dB/source=%dMB", size.messages, size.textBytes, surfaceBytes(s)>>20), func(b *testing.B) {
			b.SetBytes(surfaceBytes(s))
			b.ReportAllocs()
			for b.Loop() {
				r, err := Retain(s, "bench", 65536)
				if err != nil || r.Data.Size() > 65536 {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRetentionAccount compares the incremental byte account with
// dsh's literal algorithm, which re-serializes the whole data object after
// every step (naiveRetain): linear versus quadratic in the message count.
func BenchmarkRetentionAccount(b *testing.B) {
	for _, n := range []int{250, 500, 1_000} {
		s := benchSurface(n, 200)
		b.Run(fmt.Sprintf("incremental/messages=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := Retain(s, "bench", 65536); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("naive/messages=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, _, err := naiveRetain(s, "bench", 65536); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkProjectSurface measures the projection alone (the JSON reading
// hot path).
func BenchmarkProjectSurface(b *testing.B) {
	s := benchSurface(20_000, 1_000)
	b.SetBytes(surfaceBytes(s))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := projectSurface(s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPrepareThreeSources prepares three 20 MB sources at the default
// budget from memory: reads and retention run in parallel per source.
func BenchmarkPrepareThreeSources(b *testing.B) {
	src := &fakeSource{}
	var refs []Reference
	var total int64
	for i := range 3 {
		s := benchSurface(20_000, 1_000)
		id := fmt.Sprintf("source-%d", i)
		src.sessions = append(src.sessions, fakeSession{id: id, cwd: s.Header.CWD, events: s.Events})
		refs = append(refs, Reference{SessionID: id})
		total += surfaceBytes(s)
	}
	svc, err := NewService(src, DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(total)
	b.ReportAllocs()
	for b.Loop() {
		p, err := svc.Prepare(b.Context(), Target{}, refs)
		if err != nil || len(p.Data) != 3 {
			b.Fatal(err)
		}
	}
}
