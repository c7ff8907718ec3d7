package trace

import (
	"encoding/json"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

// appendEvent writes what encoding/json writes, byte for byte.
func TestAppendEventIsEncodingJSON(t *testing.T) {
	d0, d1, d2 := 0.0, 1.5, 1e-7
	cases := []JSONEvent{
		{Ph: "X", TS: 0},
		{Name: "T.M", Cat: CatEntry, Ph: "X", TS: 12.345, Dur: &d1, PID: 1, TID: 3, Args: map[string]any{"type": "T", "entry": "M", "index": "[1 2]"}},
		{Name: "message", Cat: CatEntry, Ph: "f", BP: "e", TS: 1e21, ID: 1<<40 | 7},
		{Name: "step", Cat: "lb", Ph: "i", S: "t", TS: -3.25, Dur: &d0, Args: map[string]any{"moved": 7, "to": int64(-2), "ok": true, "r": 0.1, "m": map[string]int{"b": 1, "a": 2}, "nil": nil}},
		{Name: "quote\" back\\ ctl\x01\t\n\r <tag> & \u2028\u2029 é 世", Ph: "M", TS: 1e-7, Dur: &d2},
		{Name: "bell\b form\f nul\x00 del\x7f esc\x1b", Ph: "M", Args: map[string]any{"k\b": "v\f"}},
		{Name: "bad utf8 \xff\xfe", Ph: "M", TS: 123456789.123456, Args: map[string]any{"k\xff": "v\xfe"}},
		{Name: "big", Ph: "X", TS: math.MaxFloat64 / 2, PID: -1, TID: math.MaxInt32},
	}
	r := rand.New(rand.NewSource(1))
	for i := range 400 {
		var s []byte
		for range r.Intn(12) {
			if i%2 == 0 {
				s = append(s, byte(r.Intn(256)))
			} else {
				s = append(s, byte(r.Intn(128))) // ASCII, controls included: valid UTF-8
			}
		}
		d := r.NormFloat64() * math.Pow(10, float64(r.Intn(40)-20))
		cases = append(cases, JSONEvent{Name: string(s), Ph: "X", TS: r.Float64() * 1e9, Dur: &d, Args: map[string]any{string(s): string(s), "n": r.Int()}})
	}
	for i := range cases {
		want, err := json.Marshal(&cases[i])
		require.NoError(t, err)
		got, err := appendEvent(nil, &cases[i])
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), "event %d", i)
	}
}

func TestAppendEventRefusesWhatJSONCannotHold(t *testing.T) {
	inf := math.Inf(1)
	for _, e := range []JSONEvent{
		{Ph: "X", TS: math.NaN()},
		{Ph: "X", Dur: &inf},
		{Ph: "i", Args: map[string]any{"c": make(chan int)}},
	} {
		_, err := appendEvent(nil, &e)
		require.Error(t, err)
	}
}
