// Package binenctest fills values with random data for round-trip tests
// of encoders: every exported field, recursively, with nil and empty
// values among the choices, so that a field an encoder forgets (or a nil
// it turns into an empty value) makes the round trip differ.
package binenctest

import (
	"math/rand/v2"
	"reflect"
)

// Fill sets every exported field reachable from ptr (a non-nil pointer)
// to random values drawn from rng.
func Fill(rng *rand.Rand, ptr any) {
	fill(rng, reflect.ValueOf(ptr).Elem(), 0)
}

func fill(rng *rand.Rand, v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(rng.IntN(2) == 1)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n := rng.Int64()
		if rng.IntN(2) == 0 {
			n = rng.Int64N(300) - 100
		}
		v.SetInt(n >> (64 - v.Type().Bits()))
		if rng.IntN(2) == 0 {
			v.SetInt(rng.Int64N(100))
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(rng.Uint64() >> (64 - v.Type().Bits()))
	case reflect.String:
		v.SetString(randomString(rng))
	case reflect.Array:
		for i := range v.Len() {
			fill(rng, v.Index(i), depth+1)
		}
	case reflect.Slice:
		switch rng.IntN(4) {
		case 0: // nil
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			n := 1 + rng.IntN(4)
			if depth > 3 {
				n = 1
			}
			s := reflect.MakeSlice(v.Type(), n, n)
			for i := range n {
				fill(rng, s.Index(i), depth+1)
			}
			v.Set(s)
		}
	case reflect.Map:
		switch rng.IntN(4) {
		case 0:
		case 1:
			v.Set(reflect.MakeMap(v.Type()))
		default:
			m := reflect.MakeMap(v.Type())
			for range 1 + rng.IntN(4) {
				k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
				fill(rng, k, depth+1)
				fill(rng, e, depth+1)
				m.SetMapIndex(k, e)
			}
			v.Set(m)
		}
	case reflect.Pointer:
		if rng.IntN(3) == 0 || depth > 5 {
			return
		}
		p := reflect.New(v.Type().Elem())
		fill(rng, p.Elem(), depth+1)
		v.Set(p)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(rng, v.Field(i), depth+1)
			}
		}
	default:
		panic("binenctest: cannot fill a " + v.Kind().String())
	}
}

func randomString(rng *rand.Rand) string {
	const chars = "ab\x00é\u2028\"\\{}"
	n := rng.IntN(6)
	r := []rune(chars)
	out := make([]rune, n)
	for i := range out {
		out[i] = r[rng.IntN(len(r))]
	}
	return string(out)
}
