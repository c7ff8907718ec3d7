package tram

import (
	"errors"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
)

type fastClient struct {
	group.Branch[fastClient]
	n int
}

func (c *fastClient) Put(v int64) { c.n++ }

type fastMain struct{ chare.Chare[fastMain] }

func init() {
	chare.Register[fastMain]()
	chare.Register[fastClient]()
	Register((*fastClient).Put)
}

func fastStart(m *fastMain, s Streamer[fastClient, int64], st Step) error {
	started := chare.NewFuture[any](m)
	st.Started = started.Callback()
	if err := s.Start(m, st); err != nil {
		return err
	}
	return chare.WaitAll(m, started)
}

// TestInserterFastPathMatchesInsertTo: the Inserter's fast path is taken
// (quick) and leaves the branch exactly as the general path
// (insertItem: Aggregator.InsertTo, then buffered) does, item by item:
// the stats (Inserted among them, which the tuner's score divides by),
// the buffers' lengths, the completion count, the idle flag, and a full
// PE sending its fullest buffer (TotalCapacity), in every mode.
func TestInserterFastPathMatchesInsertTo(t *testing.T) {
	for _, sz := range []Sizing{{BufferItems: 7}, {BufferItems: 1000, TotalCapacity: 5}} {
		for _, mode := range []Mode{Completion, Quiescence, Staged} {
			t.Run(fmt.Sprint(mode, sz), func(t *testing.T) {
				var fail error
				_, err := chare.Run(chare.Config{PEs: 4, Timeout: 30 * time.Second}, func(m *fastMain, _ []string) {
					fail = func() error {
						g, err := group.New[fastClient](m)
						if err != nil {
							return err
						}
						o := Options{Dims: []int{2, 2}, Sizing: sz, FlushPeriod: time.Hour}
						s1, err := New(m, g, (*fastClient).Put, o)
						if err != nil {
							return err
						}
						s2, err := New(m, g, (*fastClient).Put, o)
						if err != nil {
							return err
						}
						for _, s := range []Streamer[fastClient, int64]{s1, s2} {
							if err := fastStart(m, s, Step{Mode: mode, Producers: 1}); err != nil {
								return err
							}
						}
						in, err := s1.Local(m)
						if err != nil {
							return err
						}
						b1, b2 := in.b, s2.local.get(m)
						if !b1.quick {
							return errors.New("the Inserter's fast path is off in an open step")
						}
						r := rand.New(rand.NewSource(1))
						for i := 0; i < 500; i++ {
							dest := 1 + r.Intn(3)
							b1.idle.busy, b2.idle.busy = false, false
							if err := in.Insert(int64(i), dest); err != nil {
								return err
							}
							if err := b2.insertItem(int64(i), dest); err != nil {
								return err
							}
							a1, a2 := b1.agg, b2.agg
							if a1.Stats() != a2.Stats() || b1.produced != b2.produced || b1.idle.busy != b2.idle.busy {
								return fmt.Errorf("item %d: fast %+v produced %d busy %v; old %+v produced %d busy %v", i, a1.Stats(), b1.produced, b1.idle.busy, a2.Stats(), b2.produced, b2.idle.busy)
							}
							for sl := range a1.bufs {
								if a1.slotLen(sl) != a2.slotLen(sl) {
									return fmt.Errorf("item %d slot %d: %d vs %d", i, sl, a1.slotLen(sl), a2.slotLen(sl))
								}
							}
						}
						return nil
					}()
					m.Exit(0)
				})
				require.NoError(t, err)
				require.NoError(t, fail)
			})
		}
	}
}

// TestBranchTablesDroppedAtJobEnd: the process's table of a streamer's
// branches, and the function callbacks its branches made (the drain of a
// completion step on a grid, the tuner's), are dropped when the job ends,
// so that a process that runs job after job does not keep the ended ones
// alive through them.
func TestBranchTablesDroppedAtJobEnd(t *testing.T) {
	var job *chare.Job
	held := func() bool {
		found := false
		tables.Range(func(_, v any) bool {
			if t, ok := v.(*branchTable[fastClient, int64]); ok && job != nil {
				for i := range t.slots {
					if b := t.slots[i].Load(); b != nil && b.Here().Job() == job {
						found = true
					}
				}
			}
			return true
		})
		return found
	}
	before := chare.NumFuncCallbacks()
	var during bool
	var made int
	code, err := chare.Run(chare.Config{PEs: 4, Timeout: 30 * time.Second}, func(m *fastMain, _ []string) {
		err := func() error {
			g, err := group.New[fastClient](m)
			if err != nil {
				return err
			}
			s, err := New(m, g, (*fastClient).Put, Options{Dims: []int{2, 2}, FlushPeriod: time.Millisecond, Tune: true})
			if err != nil {
				return err
			}
			// Start makes both callbacks; the step need not finish.
			if err := fastStart(m, s, Step{Mode: Completion, Producers: 1}); err != nil {
				return err
			}
			job = chare.PEOf(m).Job()
			during, made = held(), chare.NumFuncCallbacks()-before
			return nil
		}()
		if err != nil {
			m.Abort(err)
			return
		}
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.True(t, during, "the running job's branches are in a table")
	require.Equal(t, 2, made, "function callbacks of the running job: the drain and the tuner's")
	require.False(t, held(), "the ended job's branches are still held")
	require.Equal(t, before, chare.NumFuncCallbacks(), "function callbacks kept after the job")
}
