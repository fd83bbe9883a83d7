package memstore

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

func header(id string, createdAt int) string {
	return `{"type":"session","version":0,"id":"` + id + `","cwd":"/w","createdAt":` + strconv.Itoa(createdAt) + `,"delegationDepth":0}` + "\n"
}

// TestMemoryServesLogsThroughTheIndex: sessions added as log texts are
// listed newest first, and a read fails with the index's own class and
// message, without the temporary path.
func TestMemoryServesLogsThroughTheIndex(t *testing.T) {
	ctx := context.Background()
	m := New(t)
	for _, log := range []string{header("a", 1), header("b", 2), header("bad", 3) + "{not json}\n" + `{"type":"turn/end","seq":1,"data":{}}` + "\n"} {
		if err := m.Add([]byte(log)); err != nil {
			t.Fatal(err)
		}
	}
	headers, err := m.ListSessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range headers {
		ids = append(ids, h.ID)
	}
	if got := strings.Join(ids, ","); got != "bad,b,a" {
		t.Errorf("listing %s, want bad,b,a", got)
	}
	if s, err := m.ReadSurface(ctx, "a"); err != nil || s.Header.ID != "a" {
		t.Errorf("ReadSurface(a) = %v, %v", s, err)
	}
	_, err = m.ReadSurface(ctx, "bad")
	var se *sessionstore.Error
	if !errors.As(err, &se) || se.Kind != sessionstore.KindCorrupt || se.Path != "" || strings.Contains(err.Error(), m.root) {
		t.Errorf("ReadSurface(bad) = %v, want a corrupt-session error without a path", err)
	}
	if _, err := m.ReadSurface(ctx, "gone"); !errors.Is(err, sessionstore.ErrNotFound) {
		t.Errorf("ReadSurface(gone) = %v, want not found", err)
	}
}

// TestMemoryRefusesDuplicatesAndAppliesOverrides: a second session with
// the same id is refused; FailRead, FailTitle and SetSurface take the
// place of the log's answers.
func TestMemoryRefusesDuplicatesAndAppliesOverrides(t *testing.T) {
	ctx := context.Background()
	m := New(t)
	if err := m.Add([]byte(header("a", 1))); err != nil {
		t.Fatal(err)
	}
	if err := m.Add([]byte(header("a", 2))); err == nil {
		t.Error("a duplicate id was accepted")
	}
	if err := m.Add([]byte("no header line")); err == nil {
		t.Error("a log without a header line was accepted")
	}
	readErr := errors.New("injected read failure")
	m.FailRead("a", readErr)
	if _, err := m.ReadSurface(ctx, "a"); err != readErr {
		t.Errorf("ReadSurface after FailRead = %v", err)
	}
	titleErr := errors.New("injected title failure")
	m.FailTitle("a", titleErr)
	if rs, err := m.ReadTitles(ctx, []string{"a"}); err != nil || len(rs) != 1 || rs[0].Err != titleErr {
		t.Errorf("ReadTitles after FailTitle = %v, %v", rs, err)
	}
	snap := `{"session":{"id":"x","createdAt":5},"capturedThroughSeq":null,"events":[{"type":"message","seq":0,"data":{"a": 1}}]}`
	if err := m.SetSurface("x", []byte(snap)); err != nil {
		t.Fatal(err)
	}
	s, err := m.ReadSurface(ctx, "x")
	if err != nil || s.Header.CreatedAt != 5 || len(s.Events) != 1 || string(s.Events[0].Data) != `{"a":1}` {
		t.Errorf("ReadSurface of a set surface = %+v, %v", s, err)
	}
}
