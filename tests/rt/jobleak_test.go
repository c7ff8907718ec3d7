package rt_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/comlib"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/lb"
	"github.com/charmgo/charm/tram"
)

// A process that runs job after job (a test binary, a service) must not
// keep the ended ones: each job here holds about 6 MB in its objects (a
// MiB per group branch, a quarter MiB per element) and uses a tuned TRAM
// streamer on a grid, a Comlib instance and an lb.NotifyFunc, all of which
// registered something per process that referred to the job (a table of
// branches, counters, function callbacks) and kept about 9 MB a job alive
// until 2026-11-27.

type leakMain struct{ chare.Chare[leakMain] }

type leakTable struct {
	group.Branch[leakTable]
	big []byte
}

func (t *leakTable) Put(int64) {
	if t.big == nil {
		t.big = make([]byte, 1<<20)
	}
}

type leakElem struct {
	array.Element[leakElem, int]
	Big []byte
}

func (e *leakElem) Init(int) { e.Big = make([]byte, 1<<18) }

func init() {
	chare.Register[leakMain]()
	chare.Register[leakTable]()
	chare.Register[leakElem]()
	tram.Register((*leakTable).Put)
}

func leakJob(t *testing.T) {
	t.Helper()
	code, err := chare.Run(chare.Config{PEs: 4, Timeout: 30 * time.Second}, func(m *leakMain, _ []string) {
		err := func() error {
			g, err := group.New[leakTable](m)
			if err != nil {
				return err
			}
			s, err := tram.New(m, g, (*leakTable).Put, tram.Options{Dims: []int{2, 2}, FlushPeriod: time.Millisecond, Tune: true})
			if err != nil {
				return err
			}
			if _, err := array.NewWith(m, array.Dims(8), (*leakElem).Init, 0); err != nil {
				return err
			}
			if _, err := comlib.New(m, comlib.Direct()); err != nil {
				return err
			}
			if err := lb.NotifyFunc(m, func(chare.Context, lb.Report) {}); err != nil {
				return err
			}
			started, finished := chare.NewFuture[any](m), chare.NewFuture[any](m)
			if err := s.Start(m, tram.Step{Mode: tram.Completion, Producers: 1, Started: started.Callback(), Finished: finished.Callback()}); err != nil {
				return err
			}
			if err := chare.WaitAll(m, started); err != nil {
				return err
			}
			for i := range 100 {
				if err := s.Insert(m, int64(i), i%4); err != nil {
					return err
				}
			}
			if err := s.Done(m, 1); err != nil {
				return err
			}
			return chare.WaitAll(m, finished)
		}()
		if err != nil {
			m.Abort(err)
			return
		}
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

func TestEndedJobsAreNotKept(t *testing.T) {
	const jobs = 12
	for range 3 {
		leakJob(t)
	}
	h0 := heapInUse()
	for range jobs {
		leakJob(t)
	}
	grown := (int64(heapInUse()) - int64(h0)) / jobs
	t.Logf("heap grew by %d KiB a job over %d jobs", grown>>10, jobs)
	require.Less(t, grown, int64(1<<20), "bytes kept per ended job (each held about 6 MB)")
}
