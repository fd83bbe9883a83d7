package reference

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// specSource is conformance §6's scenario, in corpus order (createdAt
// descending), with the target itself listed too.
func specSource() *fakeSource {
	return &fakeSource{sessions: []fakeSession{
		{id: "other", cwd: ptr("/else"), createdAt: 40},
		{id: "none", createdAt: 30},
		{id: "same-later", cwd: ptr("/same"), createdAt: 25, title: ptr("Latest title")},
		{id: "same", cwd: ptr("/same"), createdAt: 20},
		{id: "target", cwd: ptr("/same"), createdAt: 10},
	}}
}

func candidateIDs(cs []Candidate) string {
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.SessionID + "=" + c.Label
	}
	return strings.Join(ids, ",")
}

func TestListCandidates(t *testing.T) {
	specTarget := Target{SessionID: ptr("target"), CWD: ptr("/same")}
	tests := []struct {
		name   string
		target Target
		query  string
		limit  int64
		want   string
	}{
		{"no query", specTarget, "", 50, "same-later=Latest title,same=same,none=none,other=other"},
		{"cwd match", specTarget, "els", 1, "other=other"},
		{"title match, case-insensitive", specTarget, "LATEST", 1, "same-later=Latest title"},
		{"cwd query uppercase", specTarget, "/SAME", 50, "same-later=Latest title,same=same"},
		{"substring", specTarget, "ame", 50, "same-later=Latest title,same=same"},
		{"id match", specTarget, "later", 50, "same-later=Latest title"},
		{"no match", specTarget, "zzz", 50, ""},
		{"self excluded", specTarget, "target", 50, ""},
		{"limit cuts after ranking", specTarget, "", 2, "same-later=Latest title,same=same"},
		{"target without cwd: cwd-less first", Target{SessionID: ptr("target")}, "", 50, "none=none,other=other,same-later=Latest title,same=same"},
		{"no target at all lists the target session too", Target{}, "", 50, "none=none,other=other,same-later=Latest title,same=same,target=target"},
		{"space matches nothing here", specTarget, " ", 50, "same-later=Latest title"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestService(t, specSource(), DefaultConfig())
			got, err := s.ListCandidates(context.Background(), tt.target, tt.query, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if ids := candidateIDs(got); ids != tt.want {
				t.Errorf("got %s, want %s", ids, tt.want)
			}
		})
	}
}

func TestListCandidatesFields(t *testing.T) {
	s := newTestService(t, specSource(), DefaultConfig())
	got, err := s.ListCandidates(context.Background(), Target{SessionID: ptr("target"), CWD: ptr("/same")}, "", 50)
	if err != nil {
		t.Fatal(err)
	}
	want := []Candidate{
		{SessionID: "same-later", Label: "Latest title", CWD: ptr("/same"), CreatedAt: 25},
		{SessionID: "same", Label: "same", CWD: ptr("/same"), CreatedAt: 20},
		{SessionID: "none", Label: "none", CreatedAt: 30},
		{SessionID: "other", Label: "other", CWD: ptr("/else"), CreatedAt: 40},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func TestListCandidatesLimitCheckedFirst(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := newTestService(t, specSource(), DefaultConfig())
	for _, limit := range []int64{0, -1, maxSafeInteger + 1} {
		_, err := s.ListCandidates(ctx, Target{}, "", limit)
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeInvalidReference || e.Message != "candidate limit must be a positive safe integer" {
			t.Errorf("limit %d: err = %v", limit, err)
		}
	}
	if _, err := s.ListCandidates(context.Background(), Target{}, "", maxSafeInteger); err != nil {
		t.Errorf("limit 2^53-1: %v", err)
	}
}

// TestListCandidatesTitleReads checks that an empty query reads titles only
// for the cut, and a query reads them for every listed session but the target.
func TestListCandidatesTitleReads(t *testing.T) {
	target := Target{SessionID: ptr("target"), CWD: ptr("/same")}
	src := specSource()
	s := newTestService(t, src, DefaultConfig())
	if _, err := s.ListCandidates(context.Background(), target, "", 2); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ListCandidates(context.Background(), target, "x", 2); err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"same-later", "same"}, {"other", "none", "same-later", "same"}}
	if !reflect.DeepEqual(src.titleCalls, want) {
		t.Errorf("title reads %v, want %v", src.titleCalls, want)
	}
}

func TestListCandidatesTitleFailure(t *testing.T) {
	src := &fakeSource{sessions: []fakeSession{
		{id: "source", createdAt: 3, title: ptr("ignored"), titleErr: errors.New("corrupt log")},
		{id: "same-later", cwd: ptr("/same"), createdAt: 2, title: ptr("Latest title"), titleErr: errors.New("bad title data")},
		{id: "empty", createdAt: 1, title: ptr("")},
	}}
	s := newTestService(t, src, DefaultConfig())
	tests := []struct{ query, want string }{
		{"", "source=source,empty=,same-later=same-later"},
		{"sour", "source=source"},
		{"latest", ""}, // the title is not known, so it cannot match
	}
	for _, tt := range tests {
		got, err := s.ListCandidates(context.Background(), Target{}, tt.query, 50)
		if err != nil {
			t.Fatal(err)
		}
		if ids := candidateIDs(got); ids != tt.want {
			t.Errorf("query %q: got %s, want %s", tt.query, ids, tt.want)
		}
	}
}

func TestListCandidatesUnicodeLowercase(t *testing.T) {
	src := &fakeSource{sessions: []fakeSession{
		{id: "İy", createdAt: 4}, {id: "i̇x", createdAt: 3}, {id: "ix", createdAt: 2}, {id: "Ünïcode", createdAt: 1},
	}}
	s := newTestService(t, src, DefaultConfig())
	for query, want := range map[string]string{"İ": "İy=İy,i̇x=i̇x", "ÜNÏ": "Ünïcode=Ünïcode"} {
		got, err := s.ListCandidates(context.Background(), Target{}, query, 50)
		if err != nil {
			t.Fatal(err)
		}
		if ids := candidateIDs(got); ids != want {
			t.Errorf("query %q: got %s, want %s", query, ids, want)
		}
	}
}

func TestRemoteCandidates(t *testing.T) {
	src := &fakeSource{sessions: []fakeSession{
		{id: "source]", cwd: ptr("/same"), createdAt: 20},
		{id: "s]\\", cwd: ptr("/same"), createdAt: 1, title: ptr("T]it\\le [x]")},
	}}
	cfg := DefaultConfig()
	cfg.CandidateLimit = 1
	s := newTestService(t, src, cfg)
	got, err := s.RemoteCandidates(context.Background(), Target{CWD: ptr("/same")}, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Mention != `@[source\]](dsh-session:InNvdXJjZV0i)` {
		t.Fatalf("got %+v", got)
	}
	got, err = s.RemoteCandidates(context.Background(), Target{CWD: ptr("/same")}, "T]")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Mention != `@[T\]it\\le [x\]](dsh-session:InNdXFwi)` {
		t.Fatalf("got %+v", got)
	}
}

// TestListCandidatesCancellation cancels while the store is blocked on
// listing or on titles: the call must return CANCELLED without the store
// ever finishing.
func TestListCandidatesCancellation(t *testing.T) {
	for _, phase := range []string{"pre-aborted", "list", "titles", "titles-with-query"} {
		t.Run(phase, func(t *testing.T) {
			src := specSource()
			src.started = make(chan struct{})
			query := ""
			switch phase {
			case "list":
				src.blockList = true
			case "titles":
				src.blockTitles = true
			case "titles-with-query":
				src.blockTitles, query = true, "same"
			}
			s := newTestService(t, src, DefaultConfig())
			ctx, cancel := context.WithCancel(context.Background())
			if phase == "pre-aborted" {
				cancel()
			} else {
				go func() { <-src.started; cancel() }()
			}
			_, err := s.ListCandidates(ctx, Target{}, query, 50)
			var e *Error
			if !errors.As(err, &e) || e.Code != CodeCancelled || e.Message != "session reference preparation was cancelled" {
				t.Fatalf("err = %v", err)
			}
			if !errors.Is(err, context.Canceled) {
				t.Errorf("err does not wrap context.Canceled: %v", err)
			}
			cancel()
		})
	}
}

// stuckSource never returns from ListSessions, even after cancellation: the
// call must still return as soon as ctx is done.
type stuckSource struct {
	fakeSource
	release chan struct{}
}

func (s *stuckSource) ListSessions(ctx context.Context) ([]SessionHeader, error) {
	close(s.started)
	<-s.release
	return nil, nil
}

func TestListCandidatesDoesNotWaitForStore(t *testing.T) {
	src := &stuckSource{fakeSource: fakeSource{started: make(chan struct{})}, release: make(chan struct{})}
	defer close(src.release)
	s := newTestService(t, src, DefaultConfig())
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-src.started; cancel() }()
	if _, err := s.ListCandidates(ctx, Target{}, "", 50); CodeOf(err) != CodeCancelled {
		t.Fatalf("err = %v", err)
	}
}

// TestTitleResultLabel: a candidate's label is its latest title, an empty
// one included, else its id (no title, or a rejected read).
func TestTitleResultLabel(t *testing.T) {
	title, empty := "Renaming", ""
	for _, tc := range []struct {
		r    TitleResult
		want string
	}{
		{TitleResult{SessionID: "a", Title: &title}, "Renaming"},
		{TitleResult{SessionID: "a", Title: &empty}, ""},
		{TitleResult{SessionID: "a"}, "a"},
		{TitleResult{SessionID: "a", Title: &title, Err: errors.New("corrupt")}, "a"},
	} {
		if got := tc.r.Label(); got != tc.want {
			t.Errorf("%+v: label %q, want %q", tc.r, got, tc.want)
		}
	}
}
