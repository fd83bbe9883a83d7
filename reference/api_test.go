package reference

import (
	"math"
	"testing"
)

func TestMarshalPreparedLeavesItsArgument(t *testing.T) {
	tests := []struct {
		name string
		pt   PreparedText
		want string
	}{
		{"nil references become []", PreparedText{Content: "a <b> & c"}, `{"content":"a <b> & c","references":[]}`},
		{"references kept", PreparedText{Content: "x", References: []ParsedReference{}}, `{"content":"x","references":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.pt.References == nil
			b, err := MarshalPrepared(&tt.pt)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Errorf("MarshalPrepared = %s, want %s", b, tt.want)
			}
			if (tt.pt.References == nil) != before {
				t.Error("MarshalPrepared changed its argument's References")
			}
		})
	}
}

func TestCheckCandidateLimit(t *testing.T) {
	tests := []struct {
		v    float64
		want int64
		ok   bool
	}{
		{1, 1, true}, {1<<53 - 1, 1<<53 - 1, true}, {0, 0, false}, {-3, 0, false},
		{1.5, 0, false}, {1 << 53, 0, false}, {math.NaN(), 0, false}, {math.Inf(1), 0, false},
	}
	for _, tt := range tests {
		got, err := CheckCandidateLimit(tt.v)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("CheckCandidateLimit(%v) = %d, %v; want %d, ok %v", tt.v, got, err, tt.want, tt.ok)
		}
		if err != nil && CodeOf(err) != CodeInvalidReference {
			t.Errorf("CheckCandidateLimit(%v) code %q", tt.v, CodeOf(err))
		}
	}
}
