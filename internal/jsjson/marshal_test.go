package jsjson

import "testing"

func TestMarshal(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"no HTML escaping, no newline", map[string]string{"t": "<a & b>"}, `{"t":"<a & b>"}`},
		{"compact", []int{1, 2}, `[1,2]`},
		{"MarshalJSON used", struct {
			S rawString `json:"s"`
		}{"\xed\xa0\x80"}, `{"s":"\ud800"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Marshal(tt.v)
			if err != nil || string(got) != tt.want {
				t.Errorf("Marshal = %s, %v; want %s", got, err, tt.want)
			}
		})
	}
	if _, err := Marshal(make(chan int)); err == nil {
		t.Error("Marshal(chan) gave no error")
	}
}

// rawString marshals with AppendJSString, as the front ends' WTF-8 types do.
type rawString string

func (s rawString) MarshalJSON() ([]byte, error) { return AppendJSString(nil, string(s), false), nil }
