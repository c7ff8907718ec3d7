package core

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare/indexcodec"
)

// An element run counts a message as delivered (ElementRunner.Delivered)
// only once its resident member proved to be of the entry method's type:
// a member of another type (a damaged header naming another type's entry)
// sends the message down the envelope's path uncounted, and so does a
// member that is not here.

// countingRunner is an array part that only counts: members by index, the
// Delivered calls, and the indices of the messages that took the
// envelope's path.
type countingRunner struct {
	objs      map[int]any
	delivered int
	routed    []any
}

func (f *countingRunner) Locate(any) (int, error)              { return 0, nil }
func (f *countingRunner) Deliver(_ *PE, _ Envelope, i any)     { f.routed = append(f.routed, i) }
func (f *countingRunner) DeliverAll(*PE, Envelope)             {}
func (f *countingRunner) SendTo(*Header) (int, error)          { return 0, nil }
func (f *countingRunner) Where(any) (int, uint32, error)       { return 0, 0, nil }
func (f *countingRunner) WhereRaw([]byte) (int, uint32, error) { return 0, 0, nil }
func (f *countingRunner) Resident(i any) any                   { return f.objs[i.(int)] }
func (f *countingRunner) Delivered()                           { f.delivered++ }
func (f *countingRunner) ResidentRaw(raw []byte) (any, error) {
	i, err := indexcodec.Decode[int](raw)
	return f.objs[i], err
}

type otherWorker struct{ Chare[otherWorker] }

type countMain struct{ Chare[countMain] }

func init() {
	Register[otherWorker]()
	Register[countMain]()
}

func TestElementRunCountsAfterTheTypeCheck(t *testing.T) {
	e := runEntry(t)
	for _, raw := range []bool{false, true} {
		name := map[bool]string{false: "typed indices", true: "indices from another process"}[raw]
		t.Run(name, func(t *testing.T) {
			here := &runWorker{}
			f := &countingRunner{objs: map[int]any{1: here, 2: &otherWorker{}}} // 3 is not here
			_, err := Run(Config{PEs: 1, Timeout: 30 * time.Second}, func(m *countMain, _ []string) {
				pe := PEOf(m)
				typ, err := TypeOf[runWorker]()
				if err != nil {
					panic(err)
				}
				c := &Collection{ID: NewCollID(pe), Kind: KindElement, Type: typ,
					NewLocal:    func(*PE) (Part, error) { return f, nil },
					DecodeIndex: func(b []byte) (any, error) { return indexcodec.Decode[int](b) }}
				AddCollection(pe, c)
				r := &run1[runWorker, runMsg]{fn: (*runWorker).Take}
				r.h = Header{Route: Route{Kind: KindElement, Coll: c.ID, PE: 0}, Entry: e}
				for i := 1; i <= 3; i++ {
					r.msgs = append(r.msgs, runMsg{A: int32(i)})
					if raw {
						b, _ := indexcodec.Append(nil, i)
						r.idx, r.raw = append(r.idx, elemKey{}), append(r.raw, b)
					} else {
						r.idx = append(r.idx, elemKey{index: i})
					}
				}
				r.Deliver(pe.ap)
				m.Exit(0)
			})
			require.NoError(t, err)
			require.Equal(t, []runMsg{{A: 1}}, here.got, "the resident member of the entry's type ran its message")
			require.Equal(t, 1, f.delivered, "delivered: the message to member 1 alone")
			require.Equal(t, []any{2, 3}, f.routed, "the envelope's path: the member of another type, the absent one")
		})
	}
}
