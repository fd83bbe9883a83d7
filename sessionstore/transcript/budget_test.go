package transcript

import (
	"bytes"
	"math/rand"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// TestTornFrameLargerThanAChunkWithMemoryBudget: a torn final zstd frame
// whose compressed bytes grow the read buffer (taking every slot of the
// memory budget) is decoded within those slots, by a sequential read and
// by a re-read of one of its records, instead of waiting for a slot the
// read itself holds.
func TestTornFrameLargerThanAChunkWithMemoryBudget(t *testing.T) {
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	line := []byte(`{"type":"todo/write","seq":0,"time":1,"data":{"x":"`)
	noise := make([]byte, 2*readChunk) // barely compresses: a frame longer than a read chunk
	rand.New(rand.NewSource(3)).Read(noise)
	for i := range noise {
		noise[i] |= 0x80 // no "\n"
	}
	plain := append(append(line, "y\"}}\n"...), noise...)
	frame := enc.EncodeAll(plain, nil)
	log := enc.EncodeAll([]byte(cursorHeader+"\n"), nil)
	log = append(log, frame[:len(frame)-1000]...)
	done := make(chan []Record, 1)
	mem := MemoryFor(DefaultReadLimit)
	go func() {
		c := NewCursor(bytes.NewReader(log), int64(len(log)), Frames, Options{Memory: mem})
		_, recs := seqsOf(t, c)
		c.Close()
		if len(recs) == 1 {
			c = NewCursor(bytes.NewReader(log), int64(len(log)), Frames, Options{Memory: mem})
			if _, err := c.ReadAt(recs[0].Loc); err != nil {
				t.Errorf("re-read of the torn frame's record: %v", err)
			}
			c.Close()
		}
		done <- recs
	}()
	select {
	case recs := <-done:
		if len(recs) != 1 || !recs[0].Loc.Torn {
			t.Errorf("%d records, want the torn frame's first line", len(recs))
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the read of a torn frame larger than a read chunk did not finish")
	}
}
