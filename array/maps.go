package array

import (
	"fmt"
	"hash/fnv"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
)

// Map places the elements of an array on PEs (Charm++'s CkArrayMap).
// Place gets the index, its linear position in the array's shape, the
// number of elements and the number of PEs, and returns a PE.
type Map interface {
	Place(index any, pos, n, npes int) int
}

type blockMap struct{}

func (m blockMap) Place(_ any, pos, n, npes int) int { return m.placePos(pos, n, npes) }
func (blockMap) String() string                      { return "block" }

// positional is a map that places by the position alone (see place).
type positional interface{ placePos(pos, n, npes int) int }

func (blockMap) placePos(pos, n, npes int) int { return int(int64(pos) * int64(npes) / int64(n)) }
func (rrMap) placePos(pos, _, npes int) int    { return pos % npes }

type rrMap struct{}

func (m rrMap) Place(_ any, pos, n, npes int) int { return m.placePos(pos, n, npes) }
func (rrMap) String() string                      { return "round-robin" }

// hashMap places an index by a hash of its value: the default of sparse
// arrays, whose indices are not known in advance.
type hashMap struct{}

func (hashMap) Place(index any, _, _, npes int) int {
	return int(hashIndex(index) % uint64(npes))
}
func (hashMap) String() string { return "hash" }

func hashIndex(index any) uint64 {
	switch i := index.(type) {
	case int:
		return mix(uint64(i))
	case [2]int:
		return mix(uint64(i[0])*0x9e3779b97f4a7c15 ^ uint64(i[1]))
	case [3]int:
		return hashInts(i[:])
	case [4]int:
		return hashInts(i[:])
	case [5]int:
		return hashInts(i[:])
	case [6]int:
		return hashInts(i[:])
	case string:
		h := fnv.New64a()
		h.Write([]byte(i))
		return h.Sum64()
	}
	b, err := msgpack.Marshal(index)
	if err != nil {
		return 0
	}
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}

// hashInts hashes the built-in multi-dimensional indices without
// encoding them ([3]int as before).
func hashInts(v []int) uint64 {
	h := uint64(v[0])
	for _, x := range v[1:] {
		h = h*0x9e3779b97f4a7c15 ^ uint64(x)
	}
	return mix(h)
}

// mix is splitmix64's finalizer: neighbouring indices land on unrelated PEs.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

var (
	// Hash places an index by a hash of its value; it needs no shape, and
	// is the default of Sparse arrays.
	Hash Map = hashMap{}
	// Block gives each PE a contiguous run of linear positions, the
	// sizes differing by at most one (the default).
	Block Map = blockMap{}
	// RoundRobin deals linear positions to PEs in turn.
	RoundRobin Map = rrMap{}
)

type funcMap[I comparable] func(index I, npes int) int

func (f funcMap[I]) Place(index any, _, _, npes int) int { return f(index.(I), npes) }
func (funcMap[I]) String() string                        { return "user function" }

// MapFunc places elements with a function of the index and the number of
// PEs. It must give the same answer in every process.
func MapFunc[I comparable](f func(index I, npes int) int) Map { return funcMap[I](f) }

var (
	mapsMu sync.RWMutex
	maps   = map[string]Map{"block": Block, "round-robin": RoundRobin, "hash": Hash}
)

type namedMap struct {
	Map
	name string
}

func (m namedMap) String() string { return m.name }

// NamedMap registers a map under a name and returns it. A job of several
// processes sends the name, not the function, so every process must
// register it (in an init function, say); unnamed MapFunc maps work in one
// process only.
func NamedMap(name string, m Map) Map {
	mapsMu.Lock()
	defer mapsMu.Unlock()
	nm := namedMap{m, name}
	maps[name] = nm
	return nm
}

func mapName(m Map) (string, bool) {
	switch v := m.(type) {
	case blockMap:
		return "block", true
	case rrMap:
		return "round-robin", true
	case hashMap:
		return "hash", true
	case namedMap:
		return v.name, true
	}
	return "", false
}

func mapByName(name string) (Map, error) {
	mapsMu.RLock()
	defer mapsMu.RUnlock()
	if m, ok := maps[name]; ok {
		return m, nil
	}
	return nil, fmt.Errorf("array: no map named %q in this process (register it with array.NamedMap)", name)
}

// place asks m for the home of an index at position pos (-1 in a sparse
// array); a map that places by position alone (positional) is asked
// without the index in an interface, which would be an allocation per
// look-up for a [2]int, or an int of 256 or more.
func place[I any](m Map, index I, pos, n, npes int) (int, error) {
	var p int
	if pm, ok := m.(positional); ok && pos >= 0 {
		p = pm.placePos(pos, n, npes)
	} else {
		p = m.Place(index, pos, n, npes)
	}
	if p < 0 || p >= npes {
		return 0, fmt.Errorf("array: the %v map put index %v on PE %d, but the job has PEs 0..%d", m, index, p, npes-1)
	}
	return p, nil
}
