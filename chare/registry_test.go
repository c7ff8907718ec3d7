package chare_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/core"
)

// The registry without a runtime: entry methods found by method
// expression, numbered deterministically, invoked with checked messages.

type regWorker struct {
	chare.Chare[regWorker]
	got []any
}

type regMsg struct{ N int }

func (w *regWorker) Step(m regMsg)      { w.got = append(w.got, m) }
func (w *regWorker) Ping()              { w.got = append(w.got, "ping") }
func (w *regWorker) Take(v float64)     { w.got = append(w.got, v) }
func (w *regWorker) Square(x int) int   { return x * x }
func (w *regWorker) Many(a, b int)      {} // two arguments: not an entry method
func (w *regWorker) Pair() (int, int)   { return 0, 0 }
func (w *regWorker) Ptr(p *regMsg)      { w.got = append(w.got, p) }
func (w *regWorker) Wait(m regMsg)      {}
func (w *regWorker) Strings(s []string) { w.got = append(w.got, s) }

type regOther struct{ chare.Chare[regOther] }

func (o *regOther) Step(regMsg) {}

func TestRegister(t *testing.T) {
	typ := chare.Register[regWorker](chare.Threaded((*regWorker).Wait))
	require.Same(t, typ, chare.Register[regWorker](), "registering again returns the same type")
	require.Equal(t, "chare_test.regWorker", typ.Name)

	got, err := chare.TypeOf[regWorker]()
	require.NoError(t, err)
	require.Same(t, typ, got)
	byID, err := chare.TypeByID(typ.ID)
	require.NoError(t, err)
	require.Same(t, typ, byID)

	for _, name := range []string{"Step", "Ping", "Take", "Square", "Ptr", "Wait"} {
		e, err := typ.Entry(name)
		require.NoError(t, err, name)
		require.Same(t, typ, e.Type)
		require.Equal(t, "chare_test.regWorker."+name, e.String())
		byID, err := core.EntryByID(e.ID)
		require.NoError(t, err)
		require.Same(t, e, byID)
		require.Equal(t, name == "Wait", e.Threaded, name)
	}
	for _, name := range []string{"Many", "Pair", "got"} {
		_, err := typ.Entry(name)
		require.ErrorContains(t, err, "has no entry method", name)
	}
	sq, _ := typ.Entry("Square")
	require.Equal(t, "int", sq.Result.String())
	ping, _ := typ.Entry("Ping")
	require.Nil(t, ping.Msg)

	// Entries are numbered by name, so that every process agrees.
	var names []string
	for _, e := range typ.Entries() {
		names = append(names, e.Name)
	}
	require.IsIncreasing(t, names)

	_, err = chare.TypeOf[struct{ X int }]()
	require.ErrorContains(t, err, "not registered")
	_, err = chare.TypeByID(0)
	require.Error(t, err)
	_, err = core.EntryByID(chare.EntryID(uint32(typ.ID)<<16 | 0xfff))
	require.ErrorContains(t, err, "no entry method")
}

func TestRegisterErrors(t *testing.T) {
	require.Panics(t, func() { chare.Register[int]() }, "not a struct")
	chare.Register[regOther]()
	require.PanicsWithError(t,
		"chare: chare_test.regOther.Step is an entry method of chare_test.regOther, not of chare_test.regWorker",
		func() { chare.Register[regWorker](chare.Threaded((*regOther).Step)) })
}

func TestInvoke(t *testing.T) {
	typ := chare.Register[regWorker]()
	entry := func(name string) *chare.Entry {
		e, err := typ.Entry(name)
		require.NoError(t, err)
		return e
	}
	w := &regWorker{}
	cases := []struct {
		entry string
		msg   any
		want  any    // appended to w.got, or the result
		err   string // if the call must fail
	}{
		{"Step", regMsg{3}, regMsg{3}, ""},
		{"Ping", nil, "ping", ""},
		{"Take", 2.5, 2.5, ""},
		{"Take", 7, 7.0, ""},          // numbers convert
		{"Take", int64(-2), -2.0, ""}, // an int64 reduction result to a float64 entry
		{"Ptr", nil, (*regMsg)(nil), ""},
		{"Strings", nil, []string(nil), ""},
		{"Take", "7", nil, "needs a message of type float64, got string"},
		{"Step", 3, nil, "needs a message of type chare_test.regMsg, got int"},
		{"Step", nil, nil, "needs a message of type chare_test.regMsg, got none"},
		{"Ping", 1, nil, "takes no message, got int"},
	}
	for _, c := range cases {
		w.got = nil
		res, err := entry(c.entry).Invoke(w, c.msg)
		if c.err != "" {
			require.ErrorContains(t, err, c.err, "%s(%v)", c.entry, c.msg)
			require.Empty(t, w.got)
			continue
		}
		require.NoError(t, err, "%s(%v)", c.entry, c.msg)
		require.Nil(t, res)
		require.Equal(t, []any{c.want}, w.got, "%s(%v)", c.entry, c.msg)
	}
	res, err := entry("Square").Invoke(w, 9)
	require.NoError(t, err)
	require.Equal(t, 81, res)
}
