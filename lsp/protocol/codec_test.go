package protocol

import (
	"encoding/json"
	"testing"

	"go.lsp.dev/jsonrpc2"
)

func TestCodecMarshal(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"raw passes through", json.RawMessage(`{"a" : 1}`), `{"a" : 1}`},
		{"jsonrpc2 raw passes through", jsonrpc2.RawMessage(`[1, 2]`), `[1, 2]`},
		{"nil raw is null", json.RawMessage(nil), `null`},
		{"nil jsonrpc2 raw is null", jsonrpc2.RawMessage(nil), `null`},
		{"no HTML escaping", map[string]string{"t": "<a&b>"}, `{"t":"<a&b>"}`},
	}
	for _, tt := range tests {
		got, err := Codec{}.Marshal(tt.in)
		if err != nil || string(got) != tt.want {
			t.Errorf("%s: Marshal = %s, %v; want %s", tt.name, got, err, tt.want)
		}
	}
}

func TestCodecUnmarshalCopiesRaw(t *testing.T) {
	data := []byte(`{"x": [1,2]}`)
	var raw json.RawMessage
	var rpcRaw jsonrpc2.RawMessage
	var obj struct{ X []int }
	for _, v := range []any{&raw, &rpcRaw, &obj} {
		if err := (Codec{}).Unmarshal(data, v); err != nil {
			t.Fatalf("Unmarshal into %T: %v", v, err)
		}
	}
	data[0] = 'X' // the decoded raw values must not alias the input buffer
	if string(raw) != `{"x": [1,2]}` || string(rpcRaw) != `{"x": [1,2]}` {
		t.Errorf("raw values alias the input: %s, %s", raw, rpcRaw)
	}
	if len(obj.X) != 2 || obj.X[1] != 2 {
		t.Errorf("struct decode: %+v", obj)
	}
}
