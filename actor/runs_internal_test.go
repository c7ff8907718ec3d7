package actor

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/actor/wire"
)

// runMsg is a WireRunner whose head is its entry and whose tail is its
// value; a value of 255 fails to encode.
type runMsg struct{ entry, val byte }

func (runMsg) Deliver(*PE)                       {}
func (runMsg) WireKind() uint16                  { return 42 }
func (runMsg) EncodeWire(*msgpack.Encoder) error { return errors.New("runMsg travels in runs") }
func (m runMsg) AppendWireHead(b []byte) []byte  { return append(b, 'h', m.entry) }
func (m runMsg) AppendWireTail(b []byte) ([]byte, error) {
	if m.val == 255 {
		return b, errors.New("cannot encode 255")
	}
	return append(b, m.val), nil
}

// lone is a message that travels on its own.
type lone struct{ V int }

func (lone) Deliver(*PE)                             {}
func (lone) WireKind() uint16                        { return 43 }
func (m lone) EncodeWire(enc *msgpack.Encoder) error { return enc.Encode(m.V) }

func tails(t *testing.T, it wire.Item) []byte {
	t.Helper()
	var out []byte
	rest := it.Body
	for range it.Tails {
		tl, r, ok := wire.NextTail(rest)
		require.True(t, ok)
		out, rest = append(out, tl...), r
	}
	require.Empty(t, rest)
	return out
}

// Consecutive messages for one PE with one head form a run; another PE,
// another head, a lone message in between or the size cap start a new
// one; a message that fails to encode leaves the items as they were.
func TestItemEncoderRuns(t *testing.T) {
	ie := newItemEncoder()
	var items []wire.Item
	add := func(dest int, m Message) error {
		var err error
		items, err = ie.add(items, dest, m)
		return err
	}
	for _, c := range []struct {
		dest int
		m    Message
	}{
		{1, runMsg{1, 10}}, {1, runMsg{1, 11}}, {1, runMsg{1, 12}}, // run A
		{2, runMsg{1, 20}},             // another PE
		{2, runMsg{2, 21}},             // another head
		{2, lone{7}},                   // alone
		{2, runMsg{2, 22}},             // a new run after it
		{2, controlMsg{runMsg{2, 23}}}, // another kind (control)
	} {
		require.NoError(t, add(c.dest, c.m))
	}
	require.ErrorContains(t, add(2, controlMsg{runMsg{2, 255}}), "cannot encode 255")
	require.ErrorContains(t, add(3, runMsg{3, 255}), "cannot encode 255")
	require.Len(t, items, 6, "the failed new run left no item")
	want := []struct {
		pe    int32
		kind  uint16
		head  string
		tails string
	}{
		{1, 42, "h\x01", "\x0a\x0b\x0c"}, {2, 42, "h\x01", "\x14"}, {2, 42, "h\x02", "\x15"},
		{2, 43, "", ""}, {2, 42, "h\x02", "\x16"}, {2, 42 | controlBit, "h\x02", "\x17"},
	}
	for i, w := range want {
		it := items[i]
		require.Equal(t, w.pe, it.PE, "item %d", i)
		require.Equal(t, w.kind, it.Kind, "item %d", i)
		if it.Tails == 0 {
			require.Equal(t, lone{}.WireKind(), it.Kind)
			continue
		}
		require.Equal(t, w.head, string(it.Head), "item %d", i)
		require.Equal(t, w.tails, string(tails(t, it)), "item %d", i)
	}
	require.Equal(t, 1, items[5].Tails, "the failed message left the control run as it was")

	// A run stops growing at maxRun bytes of tails.
	ie.reset()
	items = items[:0]
	for range maxRun {
		require.NoError(t, add(1, runMsg{1, 1}))
	}
	require.Greater(t, len(items), 1)
	for _, it := range items {
		require.LessOrEqual(t, len(it.Body), maxRun+3)
	}
	f := &wire.Frame{Kind: wire.KindData, Token: "t", Items: items}
	b, err := wire.AppendFrame(nil, f)
	require.NoError(t, err)
	got, err := wire.DecodeFrame(b)
	require.NoError(t, err)
	total := 0
	for _, it := range got.Items {
		total += it.Tails
	}
	require.Equal(t, maxRun, total)
}

// TestItemEncoderDropsLongBuffers: the buffer a long message grew is not
// kept between frames (a message of a gigabyte would pin its size for the
// rest of the job); a buffer of the usual size is.
func TestItemEncoderDropsLongBuffers(t *testing.T) {
	ie := &itemEncoder{run: -1}
	ie.b = make([]byte, 100, 1024)
	ie.reset()
	require.Equal(t, 1024, cap(ie.b), "a usual buffer is kept")
	ie.b = make([]byte, 100, keptItemBuf+1)
	ie.reset()
	require.Zero(t, cap(ie.b), "a long message's buffer is dropped")
	require.Equal(t, -1, ie.run)
}
