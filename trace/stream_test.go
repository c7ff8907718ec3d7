package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestEventsAreKeptCompactly: an event is kept in at most 64 bytes (a
// rec, 40), and recording a run's events through a Writer allocates a
// few bytes per event, not the event's JSON: the buffers hand their
// chunks to the writer, which writes them and gives them back to be
// filled again (old: every event was held to the end, about 560 bytes
// each once encoded).
func TestEventsAreKeptCompactly(t *testing.T) {
	require.LessOrEqual(t, unsafe.Sizeof(rec{}), uintptr(64))
	saved := inFlight
	inFlight = 2 // the chunks in flight are reused sooner
	t.Cleanup(func() { inFlight = saved })
	w, err := OpenWith(filepath.Join(t.TempDir(), "t.json"), 0, 1, Options{Max: 1 << 30, Warn: io.Discard})
	require.NoError(t, err)
	b := w.Buffer(0, 1)
	l := &Label{Name: "T.M", Cat: CatEntry, Type: "T", Entry: "M"}
	const n = 32 * eventChunk
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	most := 0 // chunks a buffer holds besides the one it fills
	for i := range n {
		b.Slice(l, i, int64(i), int64(i)+1)
		most = max(most, len(b.full))
	}
	require.NoError(t, w.Close())
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	require.Zero(t, most, "a buffer outside a slice holds the chunk it fills, no more")
	t.Logf("%.1f bytes allocated per event recorded and written", float64(alloc)/n)
	// A new chunk per 4096 events would be 40 bytes per event; the old
	// conversion to JSON at the end, hundreds.
	require.Less(t, float64(alloc)/n, 32.0, "bytes allocated per event recorded and written")
	f, err := ReadFile(w.file.Name())
	require.NoError(t, err)
	slices := 0
	for _, e := range f.TraceEvents {
		if e.Ph == "X" {
			if e.TS != float64(slices)/1000 || e.Args["index"] != fmt.Sprint(slices) {
				require.FailNow(t, "slice out of order", "slice %d: %+v", slices, e)
			}
			slices++
		}
	}
	require.Equal(t, n, slices)
}

// TestWriterStreamsAsTheRunGoes: the events reach the file before Close:
// the buffers hand each filled chunk over between slices, and the writer
// writes it out (no sleeping: the file is read once the writer must have
// taken more chunks than its output buffer holds, and Close has not been
// called).
func TestWriterStreamsAsTheRunGoes(t *testing.T) {
	savedOut, savedIn := outFlush, inFlight
	outFlush, inFlight = 4096, 1
	t.Cleanup(func() { outFlush, inFlight = savedOut, savedIn })
	path := filepath.Join(t.TempDir(), "t.json")
	w, err := OpenWith(path, 0, 1, Options{Max: 1 << 30, Warn: io.Discard})
	require.NoError(t, err)
	b := w.Buffer(3, 1)
	l := &Label{Name: "T.M", Cat: CatEntry}
	// Inside an open slice, filled chunks wait for it to end.
	b.Enter(0)
	for i := range 2*eventChunk + 1 {
		b.Slice(l, i, int64(i), int64(i)+1)
	}
	require.Len(t, b.full, 2, "chunks filled while a slice is open wait for it")
	b.Leave(-1)
	b.Slice(l, 0, 0, 3*eventChunk)
	require.Empty(t, b.full, "handed over once the slice ends")
	// Enough more that the writer must have written some to the file:
	// a chunk is about 200 kB of JSON, the output buffer here 4 kB, the
	// channel holds one batch and the writer works on another.
	for i := range 3 * eventChunk {
		b.Slice(l, i, int64(i), int64(i)+1)
	}
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Greater(t, st.Size(), int64(100<<10), "the file grows while the run goes")
	require.NoError(t, w.Close())
	f, err := ReadFile(path)
	require.NoError(t, err)
	n := 0
	for _, e := range f.TraceEvents {
		if e.Ph == "X" {
			n++
		}
	}
	require.Equal(t, 5*eventChunk+2, n)
}

// TestWriterCapStopsRecordingAndSaysSo: at the cap (-tracemax), recording
// stops on every PE; standard error says so once when it happens, and
// again with the count at the end; the file holds at most the cap, an
// instant event that says recording stopped, and the count in otherData.
func TestWriterCapStopsRecordingAndSaysSo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.json")
	var warn bytes.Buffer
	const max = 2*eventChunk + 100
	w, err := OpenWith(path, 0, 1, Options{Max: max, Warn: &warn})
	require.NoError(t, err)
	b0, b1 := w.Buffer(0, 2), w.Buffer(1, 2)
	l := &Label{Name: "T.M", Cat: CatEntry}
	b0.sampler.Per, b1.sampler.Per = 1<<20, 1<<20
	const each = 3 * eventChunk
	for i := range each {
		b0.Slice(l, i, int64(i), int64(i)+1)
		b1.Slice(l, i, int64(i), int64(i)+1)
	}
	require.True(t, b0.Stopped() && b1.Stopped())
	require.Zero(t, b0.FlowFrom(), "no arrow is drawn once recording stopped")
	require.Equal(t, 1, strings.Count(warn.String(), "recording stopped"), "%s", warn.String())
	require.Contains(t, warn.String(), fmt.Sprintf("trace: %s: recording stopped after %d events (-tracemax %d)", path, max, max))
	require.NoError(t, w.Close())
	require.Contains(t, warn.String(), fmt.Sprintf("trace: %s: %d events were not recorded (-tracemax %d)", path, 2*each-max, max))

	f, err := ReadFile(path)
	require.NoError(t, err)
	slices, notes := 0, 0
	for _, e := range f.TraceEvents {
		switch {
		case e.Ph == "X":
			slices++
		case e.Ph == "i" && e.Cat == "trace":
			notes++
			require.Equal(t, fmt.Sprintf("trace stopped: -tracemax %d events reached", max), e.Name)
			require.Equal(t, "g", e.S, "a global instant: every track shows it")
			require.EqualValues(t, 2*each-max, e.Args["dropped_events"])
		}
	}
	require.Equal(t, max, slices)
	require.Equal(t, 1, notes)
	require.Equal(t, 2*each-max, f.OtherData.Dropped)
	require.Equal(t, max, f.OtherData.Max)

	_, err = OpenWith(path, 0, 1, Options{Max: -1})
	require.ErrorContains(t, err, "-1")
}

// TestWriterHoldsAFlowEndUntilItsStart: the chunks of different PEs are
// written as they fill, so the end of a flow can be handed over before
// its start; Chrome's DevTools drops an end that comes first in the file,
// so the writer holds it until the start is written.
func TestWriterHoldsAFlowEndUntilItsStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.json")
	w, err := OpenWith(path, 0, 1, Options{Warn: io.Discard})
	require.NoError(t, err)
	send, recv := w.Buffer(1, 2), w.Buffer(0, 2)
	l := &Label{Name: "T.M", Cat: CatEntry}
	send.sampler.Per = 1 << 20
	send.Enter(10)
	n := send.FlowFrom()
	send.Leave(-1)
	send.Slice(l, 1, 10, 20) // stays in PE 1's unfilled chunk until Close
	recv.Enter(30)
	recv.FlowTo(1, n, 30)
	recv.Leave(-1)
	recv.Slice(l, 0, 30, 40)
	for i := range eventChunk { // PE 0's chunk fills and is handed over first
		recv.Slice(l, 0, int64(50+i), int64(51+i))
	}
	require.NoError(t, w.Close())
	f, err := ReadFile(path)
	require.NoError(t, err)
	var order []string
	for _, e := range f.TraceEvents {
		if e.Ph == "s" || e.Ph == "f" || e.Ph == "X" && e.TS*1000 < 50 {
			order = append(order, fmt.Sprintf("%s PE %d at %g", e.Ph, e.TID, e.TS*1000))
		}
	}
	require.Equal(t, []string{"X PE 0 at 30", "X PE 1 at 10", "s PE 1 at 10", "f PE 0 at 30"}, order)
	var generic map[string]any
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &generic), "the file is JSON")
}

// appendMicros writes what appendFloat writes for float64(ns)/1000.
func TestAppendMicrosIsAppendFloat(t *testing.T) {
	for _, ns := range []int64{0, 1, 10, 100, 999, 1000, 1001, 1010, 1100, 123456789, 43388768, 1e15 - 1, 1e15 - 10, 1e15, 1<<53 - 1, 1 << 53, -1, -1500, int64(time.Hour), int64(240 * time.Hour)} {
		want, err := appendFloat(nil, us(ns))
		require.NoError(t, err)
		require.Equal(t, string(want), string(appendMicros(nil, ns)), "%d ns", ns)
	}
}
