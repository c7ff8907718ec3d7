package array

import (
	"fmt"
	"reflect"
	"sync"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/internal/core"
	"github.com/charmgo/charm/internal/mpcheck"
	"github.com/charmgo/charm/internal/wirekind"
)

// An array created in one process is rebuilt in the others from its spec:
// the index type by name, the shape (sizes, or the list of indices), and
// the map by name.

type arraySpec struct {
	Index   string // the index type, as reflect prints it
	Dims    []int  `msgpack:",omitempty"`
	List    []byte `msgpack:",omitempty"` // msgpack of []I
	Map     string
	Sparse  bool `msgpack:",omitempty"`
	Demand  bool `msgpack:",omitempty"`
	MaxHops int  `msgpack:",omitempty"`
}

type indexKind func(c *core.Collection, rt *actor.Runtime, s arraySpec, m Map, init func(any)) error

var (
	kindsMu sync.RWMutex
	kinds   = map[string]indexKind{}
)

// RegisterIndex makes a user-defined index type usable in jobs of several
// processes; register it in every process (in an init function). The
// built-in index types (int, [2]int..[6]int) need no registration.
func RegisterIndex[I comparable]() {
	kindsMu.Lock()
	defer kindsMu.Unlock()
	kinds[reflect.TypeFor[I]().String()] = func(c *core.Collection, rt *actor.Runtime, s arraySpec, m Map, init func(any)) error {
		var sh Shape[I]
		switch {
		case s.Sparse:
			sh = Sparse[I]()
		case s.List != nil:
			var list []I
			if err := mpcheck.Unmarshal(s.List, &list); err != nil {
				return fmt.Errorf("array: decoding the indices of %v: %w", c.ID, err)
			}
			sh = Indices(list...)
		default:
			var err error
			if sh, err = shapeOf[I](s.Dims); err != nil {
				return err
			}
		}
		if sh.bad != "" {
			return fmt.Errorf("array: bad shape for %v: %s", c.ID, sh.bad)
		}
		if s.MaxHops < 0 {
			return fmt.Errorf("array: %v forwards along at most %d hops", c.ID, s.MaxHops)
		}
		a := &info[I]{shape: sh, m: m, npes: rt.NumPEs(), name: fmt.Sprintf("%s %v", c.Type.Name, c.ID),
			sparse: s.Sparse, demand: s.Demand, maxHops: s.MaxHops}
		build(c, a, init)
		return nil
	}
}

// shapeOf rebuilds a Dims..Dims6 shape.
func shapeOf[I comparable](dims []int) (Shape[I], error) {
	var s any
	switch len(dims) {
	case 1:
		s = Dims(dims[0])
	case 2:
		s = Dims2(dims[0], dims[1])
	case 3:
		s = Dims3(dims[0], dims[1], dims[2])
	case 4:
		s = Dims4(dims[0], dims[1], dims[2], dims[3])
	case 5:
		s = Dims5(dims[0], dims[1], dims[2], dims[3], dims[4])
	case 6:
		s = Dims6(dims[0], dims[1], dims[2], dims[3], dims[4], dims[5])
	}
	sh, ok := s.(Shape[I])
	if !ok {
		var i I
		return Shape[I]{}, fmt.Errorf("array: %d sizes do not make a shape of %T indices", len(dims), i)
	}
	return sh, nil
}

func encodeSpec[I comparable](s Shape[I], a *info[I]) ([]byte, error) {
	name, ok := mapName(a.m)
	if !ok {
		return nil, fmt.Errorf("its map is an unnamed function: give it a name with array.NamedMap")
	}
	sp := arraySpec{Index: reflect.TypeFor[I]().String(), Dims: s.dims, Map: name, Sparse: a.sparse, Demand: a.demand, MaxHops: a.maxHops}
	kindsMu.RLock()
	_, known := kinds[sp.Index]
	kindsMu.RUnlock()
	if !known {
		return nil, fmt.Errorf("its index type %s is not registered: call array.RegisterIndex[%s]() in an init function", sp.Index, sp.Index)
	}
	if s.list != nil {
		b, err := msgpack.Marshal(s.list)
		if err != nil {
			return nil, fmt.Errorf("encoding its indices: %w", err)
		}
		sp.List = b
	}
	return msgpack.Marshal(&sp)
}

// The location manager's messages travel as msgpack structs
// (actor.RegisterStruct), their kinds in package internal/wirekind; each
// writes its index's wire form first (PrepareWire).

// PrepareWire fills the target's Raw from its index; actor calls it
// (through the messages that embed target) before encoding a message.
func (t *target) PrepareWire() error {
	if err := t.encode(); err != nil {
		return fmt.Errorf("array: encoding the index %v: %w", t.idx, err)
	}
	return nil
}

// PrepareWire also carries the constructor's envelope, if any.
func (m *insertMsg) PrepareWire() error {
	if m.ctor != nil && m.Ctor == nil {
		m.Ctor = &core.WireEnvelope{E: m.ctor}
	}
	return m.target.PrepareWire()
}

func init() {
	actor.RegisterStruct[locMsg](wirekind.ArrayLoc, "array location update")
	actor.RegisterStruct[moveMsg](wirekind.ArrayMove, "array migration request")
	actor.RegisterStruct[arriveMsg](wirekind.ArrayArrive, "array element migration")
	actor.RegisterStruct[insertMsg](wirekind.ArrayInsert, "array insertion")
	actor.RegisterStruct[deleteMsg](wirekind.ArrayDelete, "array deletion")
	actor.RegisterStruct[syncMsg](wirekind.ArraySync, "array AtSync")
	RegisterIndex[int]()
	RegisterIndex[[2]int]()
	RegisterIndex[[3]int]()
	RegisterIndex[[4]int]()
	RegisterIndex[[5]int]()
	RegisterIndex[[6]int]()
	core.RegisterBuilder("array", func(c *core.Collection, rt *actor.Runtime, init func(any)) error {
		var sp arraySpec
		if err := mpcheck.Unmarshal(c.Spec.Data, &sp); err != nil {
			return fmt.Errorf("array: decoding the spec of %v: %w", c.ID, err)
		}
		m, err := mapByName(sp.Map)
		if err != nil {
			return err
		}
		kindsMu.RLock()
		k := kinds[sp.Index]
		kindsMu.RUnlock()
		if k == nil {
			return fmt.Errorf("array: index type %s of %v is not registered in this process (array.RegisterIndex)", sp.Index, c.ID)
		}
		return k(c, rt, sp, m, init)
	})
}
