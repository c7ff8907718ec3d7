package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSamplerKeepsAllBelowTheRateAndCapsAbove(t *testing.T) {
	cases := []struct {
		name  string
		times []int64
		want  int
	}{
		{"slow sends all get arrows", []int64{0, 100, 200, 300}, 4},
		{"a burst is capped per window", []int64{0, 1, 2, 3, 4, 5}, 3},
		{"a new window starts over", []int64{0, 1, 2, 3, 100, 101, 102, 103}, 6},
		{"a clock going back restarts the window", []int64{150, 151, 152, 153, 10}, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := Sampler{Window: 100, Per: 3}
			got := 0
			for _, now := range c.times {
				if s.Take(now) {
					got++
				}
			}
			require.Equal(t, c.want, got)
		})
	}
}

func TestBufferLimitCountsWhatItDrops(t *testing.T) {
	b := NewBuffer(3, time.Now(), 2)
	l := &Label{Name: "T.M", Cat: "entry", Type: "T", Entry: "M"}
	for range 5 {
		b.Slice(l, 7, 0, 1)
	}
	require.Len(t, b.Recorded(), 2)
	require.Equal(t, 3, b.Dropped)
}

func TestBufferKeepsOrderAcrossChunks(t *testing.T) {
	for _, c := range []struct {
		name         string
		limit, added int
	}{
		{"within a chunk", 0, eventChunk - 1},
		{"a chunk exactly", 0, eventChunk},
		{"several chunks", 0, 3*eventChunk + 5},
		{"limit inside a chunk", 2*eventChunk + 7, 3 * eventChunk},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := NewBuffer(0, time.Now(), c.limit)
			l := &Label{Name: "T.M", Cat: CatEntry}
			for i := range c.added {
				b.Slice(l, i, int64(i), int64(i)+1)
			}
			want := c.added
			if c.limit > 0 {
				want = c.limit
			}
			ev := b.Recorded()
			require.Len(t, ev, want)
			require.Equal(t, c.added-want, b.Dropped)
			for i, e := range ev {
				require.Equal(t, int64(i), e.TS, "event %d", i)
				require.Equal(t, i, e.Index, "event %d", i)
			}
		})
	}
}

// TestFlowNumbersDoNotWrap: a PE's flow numbers go past 65535, and after
// the last one its sends get no arrow rather than a number in use.
func TestFlowNumbersDoNotWrap(t *testing.T) {
	b := NewBuffer(1, time.Now(), 0)
	b.sampler.Per = 1 << 20
	b.flow = 65534
	require.Equal(t, uint32(65535), b.FlowFrom())
	require.Equal(t, uint32(65536), b.FlowFrom())
	require.Equal(t, FlowID(1, 65536), b.Recorded()[1].ID)
	require.NotEqual(t, FlowID(1, 1), FlowID(1, 65537), "a flow number is not reused")
	require.NotEqual(t, FlowID(1, 1), FlowID(2, 1), "flows of different PEs differ")
	require.Equal(t, 1, flowSrc(FlowID(1, math.MaxUint32)))
	b.flow = math.MaxUint32 - 1
	require.Equal(t, uint32(math.MaxUint32), b.FlowFrom())
	require.Zero(t, b.FlowFrom(), "no arrow once the numbers are used up")
	require.Len(t, b.Recorded(), 3)
}

func TestFlowsStartWhereTheSendingSliceStarts(t *testing.T) {
	b := NewBuffer(1, time.Now().Add(-time.Second), 0)
	b.sampler.Per = 1 << 20
	outer := b.Enter(100)
	require.Equal(t, int64(-1), outer, "no slice was open")
	b.FlowFrom()
	inner := b.Enter(200) // an entry method run inline
	b.FlowFrom()
	b.Leave(inner)
	b.FlowFrom()
	b.Leave(outer)
	b.FlowFrom()
	var ts []int64
	for _, e := range b.Recorded() {
		ts = append(ts, e.TS)
	}
	require.Equal(t, []int64{100, 200, 100}, ts[:3])
	require.Greater(t, ts[3], int64(time.Second/2), "a send outside any slice starts when it happens")
}

func TestEventsPutSlicesFirstAtTheirTime(t *testing.T) {
	b := NewBuffer(0, time.Now(), 0)
	outer := &Label{Name: "T.Outer", Cat: CatEntry}
	inner := &Label{Name: "T.Inner", Cat: CatEntry}
	// As a PE records them: the flow as it is sent, each slice as it ends.
	b.Instant("lb", "step")
	b.cur.recs[0].ts = 90
	b.Enter(100)
	b.sampler.Per = 1 << 20
	b.FlowFrom()
	b.FlowTo(3, 1, 100)
	b.Slice(inner, nil, 100, 110)
	b.Slice(outer, nil, 100, 150)
	var got []string
	for _, e := range Events(0, []*Buffer{b}) {
		if e.Ph != "M" {
			got = append(got, e.Ph+" "+e.Name)
		}
	}
	require.Equal(t, []string{"i step", "X T.Outer", "X T.Inner", "s message", "f message"}, got)
}

// DevTools drops a flow's end that comes before its start in the file:
// the file is in time order across PEs, not PE after PE.
func TestEventsOfAllPEsInTimeOrder(t *testing.T) {
	start := time.Now()
	b0, b1 := NewBuffer(0, start, 0), NewBuffer(1, start, 0)
	l := &Label{Name: "T.M", Cat: CatEntry}
	b1.sampler.Per = 1 << 20
	b1.Enter(100)
	n := b1.FlowFrom()
	b1.Slice(l, nil, 100, 150)
	b0.FlowTo(1, n, 300)
	b0.Slice(l, nil, 300, 320)
	var got []string
	for _, e := range Events(0, []*Buffer{b0, b1}) {
		if e.Ph != "M" {
			got = append(got, fmt.Sprintf("%s PE %d at %g", e.Ph, e.TID, e.TS*1000))
		}
	}
	require.Equal(t, []string{"X PE 1 at 100", "s PE 1 at 100", "X PE 0 at 300", "f PE 0 at 300"}, got)
}

func TestEventsAndWrite(t *testing.T) {
	b := NewBuffer(2, time.Now(), 0)
	l := &Label{Name: "W.Step", Cat: "entry", Type: "W", Entry: "Step"}
	b.Slice(l, 5, 1000, 3500)
	b.FlowTo(1, 9, 1000)
	b.Instant("migration", "migrate", "index", "5", "to", 3)
	var out bytes.Buffer
	require.NoError(t, Write(&out, Events(1, []*Buffer{b}), OtherData{Node: 1, StartUnixNano: 42}))
	var f File
	require.NoError(t, json.Unmarshal(out.Bytes(), &f), "%s", out.String())
	require.Equal(t, int64(42), f.OtherData.StartUnixNano)
	byPh := map[string][]JSONEvent{}
	for _, e := range f.TraceEvents {
		require.Equal(t, 1, e.PID)
		byPh[e.Ph] = append(byPh[e.Ph], e)
	}
	require.Len(t, byPh["M"], 4) // process name and order, thread name and order
	x := byPh["X"][0]
	require.Equal(t, 1.0, x.TS)
	require.Equal(t, 2.5, *x.Dur)
	require.Equal(t, map[string]any{"index": "5"}, x.Args, "a slice's name is Type.Entry; its args name the element")
	fl := byPh["f"][0]
	require.Equal(t, FlowID(1, 9), fl.ID)
	require.Equal(t, "e", fl.BP)
	in := byPh["i"][0]
	require.Equal(t, "t", in.S)
	require.Equal(t, map[string]any{"index": "5", "to": 3.0}, in.Args)
}

func TestMergeShiftsNodesToTheEarliestStart(t *testing.T) {
	f0 := &File{TraceEvents: []JSONEvent{{Ph: "M", Name: "process_name"}, {Ph: "X", TS: 10}}, OtherData: OtherData{Node: 0, StartUnixNano: 5000, Dropped: 1}}
	f1 := &File{TraceEvents: []JSONEvent{{Ph: "X", TS: 10, PID: 1}}, OtherData: OtherData{Node: 1, StartUnixNano: 3000, Dropped: 2}}
	ev, other := Merge([]*File{f0, f1})
	require.Equal(t, int64(3000), other.StartUnixNano)
	require.Equal(t, 3, other.Dropped)
	type at struct {
		pid int
		ts  float64
	}
	require.Equal(t, []at{{0, 0}, {1, 10}, {0, 12}}, []at{{ev[0].PID, ev[0].TS}, {ev[1].PID, ev[1].TS}, {ev[2].PID, ev[2].TS}},
		"metadata first, then in time order: node 0 started 2 µs later")
}

func TestOpenNamesAPathThatCannotBeWritten(t *testing.T) {
	p := filepath.Join(t.TempDir(), "missing", "t.json")
	_, err := Open(p, 0, 1)
	require.ErrorContains(t, err, p)
	_, err = Open(p, 2, 3)
	require.ErrorContains(t, err, p+".node2")
}

func TestReadFileRefusesWhatIsNotATrace(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(p, []byte(`{"traceEvents": [`), 0o644))
	_, err := ReadFile(p)
	require.ErrorContains(t, err, p)
}

func TestCloseMergesNodeFilesAndNamesMissingOnes(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.json")
	w1, err := Open(p, 1, 3)
	require.NoError(t, err)
	w1.Buffer(5, 1).Instant("lb", "load-balancing step")
	require.NoError(t, w1.Close())
	w0, err := Open(p, 0, 3)
	require.NoError(t, err)
	w0.Buffer(0, 1).Instant("quiescence", "quiescence")
	require.NoError(t, w0.Close())
	f, err := ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, []int{2}, f.OtherData.Missing)
	names := map[string]int{}
	for _, e := range f.TraceEvents {
		if e.Ph == "i" {
			names[e.Name] = e.PID
		}
	}
	require.Equal(t, map[string]int{"load-balancing step": 1, "quiescence": 0}, names)
	require.NoFileExists(t, NodePath(p, 1))
}

func TestBufferKeepsEveryKindOfEvent(t *testing.T) {
	a, b := NewBuffer(0, time.Now(), 0), NewBuffer(1, time.Now(), 0)
	shared := &Label{Name: "T.M", Cat: CatEntry, Type: "T", Entry: "M"}
	other := &Label{Name: "U.N", Cat: CatEntry, Type: "U", Entry: "N"}
	a.Slice(shared, 5, 1, 2)
	b.Slice(other, nil, 1, 2)
	b.Slice(shared, [2]int{3, 4}, 3, 4) // numbered by a first
	b.Instant("lb", "step", "moved", 7)
	a.Slice(shared, "elem", 5, 6)
	b.Slice(other, -2, 7, 9)

	ea, eb := a.Recorded(), b.Recorded()
	require.Len(t, ea, 2)
	require.Equal(t, Event{Kind: Slice, TS: 1, Dur: 1, Label: shared, Index: 5}, ea[0])
	require.Equal(t, Event{Kind: Slice, TS: 5, Dur: 1, Label: shared, Index: "elem"}, ea[1])
	require.Len(t, eb, 4)
	require.Equal(t, Event{Kind: Slice, TS: 1, Dur: 1, Label: other}, eb[0])
	require.Equal(t, Event{Kind: Slice, TS: 3, Dur: 1, Label: shared, Index: [2]int{3, 4}}, eb[1])
	require.Equal(t, Instant, eb[2].Kind)
	require.Equal(t, "step", eb[2].Label.Name)
	require.Equal(t, "lb", eb[2].Label.Cat)
	require.Equal(t, map[string]any{"moved": 7}, eb[2].Args)
	require.Equal(t, Event{Kind: Slice, TS: 7, Dur: 2, Label: other, Index: -2}, eb[3])
}

func TestFullBufferKeepsNothingOfWhatItDrops(t *testing.T) {
	b := NewBuffer(0, time.Now(), 1)
	l := &Label{Name: "T.M", Cat: CatEntry}
	b.Slice(l, "first", 0, 1)
	for range 100 {
		b.Slice(l, "dropped", 0, 1)
		b.Instant("lb", "dropped", "k", 1)
	}
	require.Equal(t, 200, b.Dropped)
	require.Len(t, b.cur.refs, 1, "the dropped events' indices and instants are not kept")
	require.Len(t, b.labels, 1)
}

// PEs may share a Label: recording it is a read (run under -race).
func TestBuffersShareALabelConcurrently(t *testing.T) {
	shared := &Label{Name: "T.M", Cat: CatEntry}
	other := &Label{Name: "U.N", Cat: CatEntry}
	bufs := []*Buffer{NewBuffer(0, time.Now(), 0), NewBuffer(1, time.Now(), 0)}
	var wg sync.WaitGroup
	for _, b := range bufs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				l := shared
				if i%3 == 0 {
					l = other
				}
				b.Slice(l, i, int64(i), int64(i)+1)
			}
		}()
	}
	wg.Wait()
	for _, b := range bufs {
		ev := b.Recorded()
		require.Len(t, ev, 1000)
		for i, e := range ev {
			want := shared
			if i%3 == 0 {
				want = other
			}
			require.Same(t, want, e.Label, "PE %d event %d", b.PE, i)
		}
	}
}
